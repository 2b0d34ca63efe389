#!/bin/bash
# tools/dev/format.sh check|fix: clang-format 14 over the project's C++ sources, with the
# repository's .clang-format. `check` changes nothing and names every file whose
# formatting differs (exit 1 if any); `fix` rewrites those files in place.
# The sources are the .cpp/.hpp/.h files under common, chapters, tools, tests and fuzz,
# outside tests/data and tests/fixtures (inputs, not code); build directories sit at the
# top level, so they are never searched.
set -u
cd "$(dirname "$0")/../.."

mode=${1:-}
if [ "$mode" != check ] && [ "$mode" != fix ]; then
    echo "usage: tools/dev/format.sh check|fix" >&2
    exit 2
fi
# Another major version formats differently, so only 14 is the reference.
formatter=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
if [ -z "$formatter" ] || ! "$formatter" --version 2>/dev/null | grep -q "version 14\."; then
    echo "format: clang-format 14 is needed (Debian: apt-get install clang-format-14; or CLANG_FORMAT=path)" >&2
    exit 2
fi

mapfile -t sources < <(find common chapters tools tests fuzz -type f \
    \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) \
    -not -path 'tests/data/*' -not -path 'tests/fixtures/*' | LC_ALL=C sort)

if [ "$mode" = fix ]; then
    "$formatter" -i --style=file "${sources[@]}"
    echo "format: ${#sources[@]} files formatted with $("$formatter" --version | grep -o 'version [0-9.]*')"
    exit 0
fi

differ=0
for f in "${sources[@]}"; do
    if ! "$formatter" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
        echo "needs clang-format: $f"
        differ=$((differ + 1))
    fi
done
if [ "$differ" -gt 0 ]; then
    echo "format-check: $differ of ${#sources[@]} files differ from clang-format; \`make format\` fixes them"
    exit 1
fi
echo "format-check: all ${#sources[@]} files as clang-format writes them"
