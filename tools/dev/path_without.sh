#!/usr/bin/env bash
# path_without.sh DIR PROGRAM...: fills DIR with links to every program on PATH except the
# named ones and prints DIR, a PATH under which they are not found, to check that the
# chapters which use them say so and carry on. Nothing is uninstalled.
set -euo pipefail
dir=$(realpath -m "$1")
shift
rm -rf "$dir" && mkdir -p "$dir"
IFS=: read -ra parts <<<"$PATH"
for d in "${parts[@]}"; do
  [[ -d $d ]] || continue
  for f in "$d"/*; do
    name=${f##*/}
    [[ -x $f && ! -d $f && ! -e $dir/$name ]] || continue
    for skip in "$@"; do [[ $name == "$skip" ]] && continue 2; done
    ln -s "$f" "$dir/$name"
  done
done
echo "$dir"
