#!/usr/bin/env bash
# tools/corpus_delta.sh SEED_DIR CORPUS_DIR DELTA_DIR: the new inputs of a fuzz run.
#
# Copies into DELTA_DIR (emptied first) every file of CORPUS_DIR that is not byte-identical to a
# file of SEED_DIR (the corpus the run started from; absent = empty), compared by the SHA-1 of
# the contents (libFuzzer names its corpus files by that hash, but a committed seed may carry
# another name), each distinct content once, under its name in CORPUS_DIR; prints the count.
# run-gpu-tier.sh (fuzz_one) writes OUT/corpus-delta/<target>/ with it, and
# `tools/harness corpus-merge` merges such a delta into fuzz/corpus/ (docs/nightly.md).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: corpus_delta.sh SEED_DIR CORPUS_DIR DELTA_DIR" >&2; exit 2; }
seed=$1 corpus=$2 delta=$3
[ -d "$corpus" ] || { echo "corpus_delta.sh: no corpus dir $corpus" >&2; exit 2; }
rm -rf "$delta" && mkdir -p "$delta"
declare -A known=()
if [ -d "$seed" ]; then
    while read -r h _; do known[$h]=1; done < <(find "$seed" -type f -exec sha1sum -- {} +)
fi
n=0
while read -r h f; do
    [ -z "${known[$h]:-}" ] || continue
    known[$h]=1
    cp -- "$f" "$delta/$(basename -- "$f")"
    n=$((n + 1))
done < <(find "$corpus" -type f -exec sha1sum -- {} +)
echo "$n"
