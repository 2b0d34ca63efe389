#!/usr/bin/env bash
# handout.sh NN DEST: the chapter's exercises as a student gets them (no solution.cpp).
set -euo pipefail
ch=$1 dest=$2
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(cd "$root/chapters" && ls -d "${ch}"_* 2>/dev/null | head -1 || true)
[[ -n $dir && -d $root/chapters/$dir/exercises ]] || { echo "handout: chapter $ch has no exercises" >&2; exit 2; }
out="$dest/$dir"
rm -rf "$out" && mkdir -p "$out"
find "$root/chapters/$dir/exercises" -maxdepth 1 -type f ! -name 'solution.cpp' -exec cp {} "$out/" \;
echo "wrote $out: $(cd "$out" && ls | tr '\n' ' ')"
