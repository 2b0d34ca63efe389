#!/usr/bin/env bash
# fuzz_run.sh FUZZER CORPUS SECONDS CRASH_DIR: one libFuzzer run of SECONDS on a copy of CORPUS
# (the corpus in the tree is not written to). Prints the executions and executions per second;
# a crash's input is kept in CRASH_DIR (turn it into a regression: fuzz/regressions/<target>/).
set -euo pipefail
fuzzer=$1 corpus=$2 seconds=$3 crashes=$4
name=${fuzzer##*/}
mkdir -p "$crashes"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
if [[ -d $corpus ]]; then cp -r "$corpus"/. "$work/corpus"/; fi
status=0
"$fuzzer" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -artifact_prefix="$crashes/" \
  "$work/corpus" >"$work/log" 2>&1 || status=$?
runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$work/log")
rate=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+)/\1/p' "$work/log")
cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$work/log" | tail -1 || true)
if [[ $status -ne 0 ]]; then
  echo "$name: FAILED (status $status) after ${runs:-?} executions; input kept in $crashes"
  grep -E 'ERROR|SUMMARY|==[0-9]+==|Test unit written|deadly signal|timeout' "$work/log" | head -20
  exit 1
fi
echo "$name: ${seconds} s, ${runs:-?} executions, ${rate:-?} executions/s, ${cov:-no coverage line}, corpus $(ls "$work/corpus" | wc -l) inputs, no crash"
