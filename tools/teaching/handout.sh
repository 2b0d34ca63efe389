#!/usr/bin/env bash
# handout.sh NN DEST: the chapter's exercises as a student gets them, DEST/chNN.tar.gz
# (tools/teaching/handout.py: a directory that builds on its own, without the answer key).
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: handout.sh NN DEST" >&2; exit 2; }
exec /usr/bin/python3 "$(dirname "$0")/handout.py" "$1" "$2" --tar
