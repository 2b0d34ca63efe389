#!/usr/bin/env bash
# Runs every row of a bad-argument table; each must exit 2 with one stderr line
# that names the program, and must not leave a file in the temporary directory.
set -u
bin=$1 table=$2
fail=0 rows=0
while IFS= read -r line; do
  [[ -z "${line// }" || "$line" == \#* ]] && continue
  prog=$(echo "${line%%|*}" | xargs)
  args=$(echo "${line#*|}" | xargs)
  tmp=$(mktemp -d)
  args=${args//\{tmp\}/$tmp}
  rows=$((rows + 1))
  # shellcheck disable=SC2086
  timeout 60 "$bin/$prog" $args >"$tmp.out" 2>"$tmp.err" </dev/null
  status=$?
  nerr=$(wc -l <"$tmp.err")
  left=$(find "$tmp" -mindepth 1 | wc -l)
  if [[ $status -ne 2 || $nerr -ne 1 || $left -ne 0 ]] || ! grep -q "^$prog: " "$tmp.err"; then
    echo "FAIL: $prog $args -> status $status, $nerr stderr line(s), $left file(s) left:"
    sed 's/^/    /' "$tmp.err"
    fail=$((fail + 1))
  else
    echo "ok:   $prog $args -> $(cat "$tmp.err")"
  fi
  rm -rf "$tmp" "$tmp.out" "$tmp.err"
done <"$table"
echo "$((rows - fail)) passed, $fail failed"
[[ $fail -eq 0 && $rows -gt 0 ]]
