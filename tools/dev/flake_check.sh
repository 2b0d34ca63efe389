#!/usr/bin/env bash
# flake_check.sh BUILD [RUNS] [ATTEMPTS]: runs the `timing`-labelled tests RUNS times (default 20)
# and prints, per test, how many runs passed, failed or skipped. Exit 1 if any run failed.
# ATTEMPTS (default 1) gives each test that many attempts per run (make test gives one):
# with 1 the table counts single attempts.
set -u
build=$1 runs=${2:-20} attempts=${3:-1}
log=$(mktemp)
for ((r = 1; r <= runs; r++)); do
  printf '\rrun %d/%d' "$r" "$runs" >&2
  # A retried test prints a line per attempt (the later ones without "k/n"); keep its last.
  (cd "$build" && ctest -L timing --no-tests=error --repeat "until-pass:$attempts" 2>&1) |
    sed -nE 's/^ *([0-9]+\/[0-9]+ )?Test +#[0-9]+: (.*[^ .]) \.+ *(\*\*\*)?([A-Za-z]+).*/\4\t\2/p' |
    awk -F'\t' '{ last[$2] = $1; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
      END { for (i = 1; i <= n; i++) print last[order[i]] "\t" order[i] }' >>"$log"
done
printf '\r\033[K' >&2
printf '%-70s %6s %6s %7s\n' test passed failed skipped
awk -F'\t' '{ n[$2]++; if ($1=="Passed") p[$2]++; else if ($1=="Skipped" || $1=="Not") s[$2]++; else f[$2]++ }
  END { bad = 0; for (t in n) { printf "%-70s %6d %6d %7d\n", substr(t, 1, 70), p[t], f[t], s[t]; if (f[t]) bad = 1 }
        exit bad }' "$log"
status=$?
rm -f "$log"
exit $status
