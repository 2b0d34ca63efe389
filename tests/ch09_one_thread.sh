#!/usr/bin/env bash
# Chapter 9 with --threads 1: no inf or nan anywhere, no step printed twice in the table of
# steps (the rows for several threads stay, with dashes), and one line that says why.
set -u
bin=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin/ch09_matmul" --quick --n 96 --threads 1 --runs 1 >"$out" </dev/null || { echo "ch09_matmul exited with status $?"; exit 1; }
fail=0
if grep -Einw 'inf|nan|-nan' "$out"; then echo "FAIL: inf or nan in the output"; fail=1; fi
# The labels of the table of steps: section 3's rows that start with a step number.
labels=$(awk '/^3\. /{on=1; next} /^4\. /{on=0} on' "$out" | grep -E '^  [0-9]+t? ' | sed -E 's/^  (.*[^ ])  +.*/\1/')
dups=$(echo "$labels" | sort | uniq -d)
if [[ -n $dups ]]; then echo "FAIL: rows printed twice: $dups"; fail=1; fi
if grep -nE '(micro-kernel|OpenBLAS|BLIS), threads: 1\b' "$out"; then echo "FAIL: a row for several threads on one thread"; fail=1; fi
said=$(grep -c -- '--threads 1' "$out")
if [[ $said -ne 1 ]]; then echo "FAIL: $said lines say the rows for several threads were not run (want 1)"; fail=1; fi
[[ $fail -eq 0 ]] && echo "ch09_matmul --threads 1: $(echo "$labels" | wc -l) distinct steps, no inf or nan"
exit $fail
