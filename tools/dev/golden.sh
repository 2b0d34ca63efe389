#!/usr/bin/env bash
# golden.sh check|update|summary BIN_DIR CHAPTER...
#   check:   run each chapter in golden mode (CACHEBOOK_GOLDEN=1) and diff its stdout with expected.txt
#   update:  write that stdout to expected.txt (a change to the book: review the diff)
#   summary: check every chapter and print a table: chapter, match / differs, seconds
#   summary runs each chapter once, measured, and keeps the run (tools/dev/chapter_runs.py: its
#   output, results and golden-mode text under one key); check compares a kept run of the same
#   key instead of running the chapter again (make test after make run), and runs it otherwise;
#   make book shows the kept runs. Under CACHEBOOK_EMULATOR nothing is kept.
#   A CHAPTER of the form NAME.quick runs NAME --quick against NAME/expected.quick.txt: the
#   same code on smaller inputs, for a chapter whose full run takes too long somewhere (chapter
#   9 under an emulator).
# golden.sh same BIN_DIR FIXTURE_DIR CHAPTER [ARGS...]
#   runs the chapter in golden mode twice, on this machine and with every machine source
#   replaced by the fixture (CACHEBOOK_MACHINE), and requires the same stdout: the output's
#   shape does not depend on what the machine reports (cheap with --quick for a slow chapter)
# CACHEBOOK_EMULATOR, when set, is the command the programs run under (a cross build's qemu).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
if [[ ${1:-} == same ]]; then
  bin=$2 fixture=$3 ch=$4
  shift 4
  real=$(mktemp) fake=$(mktemp)
  trap 'rm -f "$real" "$fake"' EXIT
  CACHEBOOK_GOLDEN=1 "$bin/ch$ch" "$@" >"$real" </dev/null || { echo "ch$ch $* exited with status $?" >&2; exit 1; }
  CACHEBOOK_GOLDEN=1 CACHEBOOK_MACHINE=$fixture "$bin/ch$ch" "$@" >"$fake" </dev/null ||
    { echo "ch$ch $* under $fixture exited with status $?" >&2; exit 1; }
  if cmp -s "$real" "$fake"; then echo "ch$ch $*: the same under $(basename "$fixture")"; exit 0; fi
  diff -u "$real" "$fake" | head -40 >&2
  exit 1
fi
mode=$1 bin=$2
shift 2
status=0
[[ $mode == summary ]] && printf '\n%-18s %-8s %8s\n%s\n' chapter golden seconds "------------------------------------"
for ch in "$@"; do
  args=()
  if [[ $ch == *.quick ]]; then
    name=${ch%.quick} args=(--quick)
    expected="$root/chapters/$name/expected.quick.txt"
  else
    name=$ch
    expected="$root/chapters/$ch/expected.txt"
  fi
  prog="$bin/ch$name"
  out=$(mktemp)
  start=$(date +%s%N)
  kept=
  if [[ -z ${CACHEBOOK_EMULATOR:-} && $mode == summary ]]; then
    kept=$(/usr/bin/python3 "$root/tools/dev/chapter_runs.py" run "$bin" "$ch")
    rc=$?
    [[ $rc -eq 0 ]] && cp "${kept%%$'\t'*}/golden.txt" "$out"
  elif [[ -z ${CACHEBOOK_EMULATOR:-} && $mode == check ]] &&
    kept=$(/usr/bin/python3 "$root/tools/dev/chapter_runs.py" fresh "$bin" "$ch"); then
    echo "ch$ch: the kept run of this commit, build and machine ($kept)"
    cp "$kept/golden.txt" "$out"
    rc=0
  else
    # shellcheck disable=SC2086
    CACHEBOOK_GOLDEN=1 ${CACHEBOOK_EMULATOR:-} "$prog" "${args[@]}" >"$out" </dev/null
    rc=$?
  fi
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  secs=$(printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)))
  if [[ $mode == summary && -n $kept ]]; then secs=$(cut -f2 <<<"$kept"); fi  # the program's own time
  case $mode in
    update)
      if [[ $rc -ne 0 ]]; then echo "ch$ch exited with status $rc; $(basename "$expected") left as it was" >&2; status=1
      else cp "$out" "$expected"; echo "wrote $expected"; fi ;;
    check|summary)
      if [[ $rc -eq 0 ]] && [[ -f $expected ]] && cmp -s "$out" "$expected"; then result=match
      else
        result=differs; status=1
        [[ $rc -ne 0 ]] && echo "ch$ch exited with status $rc" >&2
        [[ -f $expected ]] && diff -u "$expected" "$out" | head -40 >&2 || echo "missing $expected" >&2
      fi
      if [[ $mode == summary ]]; then printf '%-18s %-8s %8s\n' "$ch" "$result" "$secs"
      else echo "ch$ch: $result (${secs}s)"; fi ;;
    *) echo "usage: golden.sh check|update|summary BIN_DIR CHAPTER..." >&2; exit 2 ;;
  esac
  rm -f "$out"
done
exit $status
