#!/usr/bin/env bash
# The format check of the test command: every C, CUDA and header file of the tree is formatted
# with the committed .clang-format (Debian's clang-format 14). Prints each file that is not, with
# the command that fixes it, and fails.
#   bazel test //tools:format_check          (files: the format_srcs filegroup of each package)
#   tools/check_format.sh --fix              (from the checkout: rewrites every file in place)
set -uo pipefail
CF=${CLANG_FORMAT:-clang-format}
if ! command -v "$CF" >/dev/null 2>&1; then
    echo "format_check: $CF not found (tools/harness deps installs clang-format)" >&2
    exit 1
fi
if [ "${1:-}" = "--fix" ]; then
    cd "$(dirname "$0")/.."
    git ls-files '*.c' '*.h' '*.cu' '*.cuh' | grep -v '^third_party/' | xargs "$CF" -i
    exit 0
fi
STYLE=file
case "${1:-}" in --style=*) STYLE="file:${1#--style=}"; shift ;; esac
bad=0
n=0
for f in "$@"; do
    n=$((n + 1))
    if ! "$CF" --style="$STYLE" --dry-run --Werror "$f" >/dev/null 2>&1; then
        echo "not formatted: $f   (fix: clang-format -i $f, or tools/check_format.sh --fix)"
        bad=$((bad + 1))
    fi
done
echo "format_check: $n files, $bad not formatted"
[ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
