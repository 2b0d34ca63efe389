#!/usr/bin/env bash
# flake_check.sh BUILD [RUNS]: runs the `timing`-labelled tests RUNS times (default 20)
# and prints, per test, how many runs passed, failed or skipped. Exit 1 if any run failed.
set -u
build=$1 runs=${2:-20}
log=$(mktemp)
for ((r = 1; r <= runs; r++)); do
  printf '\rrun %d/%d' "$r" "$runs" >&2
  (cd "$build" && ctest -L timing --no-tests=error 2>&1) |
    sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: (.*[^ .]) \.+ *(\*\*\*)?([A-Za-z]+).*/\3\t\1/p' >>"$log"
done
printf '\r\033[K' >&2
printf '%-70s %6s %6s %7s\n' test passed failed skipped
awk -F'\t' '{ n[$2]++; if ($1=="Passed") p[$2]++; else if ($1=="Skipped" || $1=="Not") s[$2]++; else f[$2]++ }
  END { bad = 0; for (t in n) { printf "%-70s %6d %6d %7d\n", substr(t, 1, 70), p[t], f[t], s[t]; if (f[t]) bad = 1 }
        exit bad }' "$log"
status=$?
rm -f "$log"
exit $status
