#!/usr/bin/env bash
# flake_check.sh BUILD [RUNS] [ATTEMPTS]: runs the `timing`-labelled tests RUNS times (default 20),
# ATTEMPTS attempts each (default 1, as make test gives them), and prints a table: per test, how
# many runs its claim held (the test passed), failed, or was inconclusive (the test skipped, and its
# output says why after "SKIPPED:"), then the last reason of each test that was inconclusive, and
# the output of every failed run. Exit 1 if any run failed. make test's measured phase is one
# such run; make flake-check is twenty. FLAKE_TESTS=REGEX: only the timing tests whose names match.
# flake_check.sh --table LOG...: the same table from saved `ctest -V` output, one file per run.
# flake_check.sh --self-test: the table of the canned runs in tests/data/flake_check against the
# one written down there.
set -u
here=$(cd "$(dirname "$0")" && pwd)

# One line per test of one run's `ctest -V` output: verdict, name, reason (tab-separated). A test
# retried (ATTEMPTS > 1) prints a status line per attempt: its last counts. Its output lines start
# with "NUMBER: ", its status line with "k/n Test #NUMBER: NAME ...   Passed" (or ***Failed,
# ***Skipped, ***Timeout, ...).
verdicts_of_run() {
  awk '
    match($0, /^[0-9]+: /) {
      test = substr($0, 1, RLENGTH - 2); text = substr($0, RLENGTH + 1)
      if (!(test in output)) output[test] = ""
      output[test] = output[test] "    " text "\n"
      if (index(text, "SKIPPED: ")) { reason[test] = substr(text, index(text, "SKIPPED: ") + 9); wrapped = test; next }
      # Catch wraps a long message: its next lines, indented alike, belong to the reason.
      if (test == wrapped && text ~ /^  [^ ]/) { sub(/^ +/, "", text); reason[test] = reason[test] " " text; next }
      wrapped = ""
      next
    }
    match($0, /^ *([0-9]+\/[0-9]+ )?Test +#[0-9]+: /) {
      head = substr($0, 1, RLENGTH); rest = substr($0, RLENGTH + 1)
      sub(/^.*#/, "", head); sub(/: $/, "", head)
      status = rest; sub(/^.* \.+ */, "", status); sub(/^\*+/, "", status); sub(/ +[0-9.]+ sec.*$/, "", status)
      name = rest; sub(/ \.+ *\**[A-Za-z].*$/, "", name)
      if (!(head in seen)) { seen[head] = 1; order[++n] = head }
      last[head] = status; names[head] = name
    }
    END {
      for (i = 1; i <= n; i++) {
        t = order[i]; s = last[t]
        if (s == "Passed") verdict = "holds"
        else if (s == "Skipped") verdict = "inconclusive"
        else verdict = "fails"
        why = verdict == "inconclusive" ? (t in reason ? reason[t] : "(no SKIPPED: reason in the output)") : \
              verdict == "fails" ? s : ""
        printf "%s\t%s\t%s\n", verdict, names[t], why
        if (verdict == "fails" && dump != "") printf "--- %s (%s)\n%s", names[t], s, output[t] >> dump
      }
    }' dump="${2:-}" "$1"
}

# The table from the verdict lines of every run; exit 1 if any run failed.
print_table() {
  awk -F'\t' '
    { if (!($2 in runs)) order[++n] = $2
      runs[$2]++; count[$2, $1]++; if ($1 == "inconclusive") why[$2] = $3 }
    END {
      printf "%5s %5s %12s  %s\n", "holds", "fails", "inconclusive", "test"
      bad = 0
      for (i = 1; i <= n; i++) {
        t = order[i]
        printf "%5d %5d %12d  %s\n", count[t, "holds"], count[t, "fails"], count[t, "inconclusive"], t
        if (count[t, "fails"]) bad = 1
      }
      for (i = 1; i <= n; i++)
        if (order[i] in why) printf "inconclusive, last reason: %s: %s\n", order[i], why[order[i]]
      exit bad
    }' "$@"
}

table_of_logs() {
  local records
  records=$(mktemp)
  for log in "$@"; do verdicts_of_run "$log" >>"$records"; done
  print_table "$records"
  local status=$?
  rm -f "$records"
  return $status
}

self_test() {
  local data=$here/../../tests/data/flake_check got status
  got=$(table_of_logs "$data"/run1.txt "$data"/run2.txt)
  status=$?
  if [ "$got" != "$(cat "$data"/expected_table.txt)" ]; then
    echo "flake_check self-test: the table differs from tests/data/flake_check/expected_table.txt:" >&2
    diff <(echo "$got") "$data"/expected_table.txt >&2
    return 1
  fi
  if [ $status -ne 1 ]; then
    echo "flake_check self-test: a table with a failed run must exit 1, not $status" >&2
    return 1
  fi
  if ! table_of_logs "$data"/run2.txt >/dev/null; then
    echo "flake_check self-test: a run without a failure must exit 0" >&2
    return 1
  fi
  echo "flake_check self-test: the canned runs give the expected table"
}

case "${1:-}" in
  --self-test) self_test; exit ;;
  --table) shift; table_of_logs "$@"; exit ;;
  "" | -*) echo "usage: flake_check.sh BUILD [RUNS] [ATTEMPTS] | --table LOG... | --self-test" >&2; exit 2 ;;
esac

build=$1 runs=${2:-20} attempts=${3:-1}
case "$runs$attempts" in *[!0-9]*) echo "flake_check.sh: RUNS and ATTEMPTS are whole numbers" >&2; exit 2 ;; esac
if [ "$runs" -lt 1 ] || [ "$attempts" -lt 1 ]; then echo "flake_check.sh: RUNS and ATTEMPTS are at least 1" >&2; exit 2; fi
logs=$(mktemp -d)
failed=$logs/failed.txt
records=$logs/verdicts.txt
: >"$records"
for ((r = 1; r <= runs; r++)); do
  echo "measured tests, run $r of $runs ($attempts attempt(s) each)" >&2
  (cd "$build" && ctest -V -L timing ${FLAKE_TESTS:+-R "$FLAKE_TESTS"} --no-tests=error \
    --repeat "until-pass:$attempts" >"$logs/run$r.txt" 2>&1)
  grep -E '^ *[0-9]+/[0-9]+ Test +#' "$logs/run$r.txt" >&2
  verdicts_of_run "$logs/run$r.txt" "$failed" >>"$records"
done
echo
print_table "$records"
status=$?
if [ -s "$failed" ]; then
  echo
  echo "output of the failed runs:"
  cat "$failed"
fi
rm -rf "$logs"
exit $status
