#!/usr/bin/env bash
# The corpus delta of a GPU run and `tools/harness corpus-merge`'s refusals, without a GPU:
#   1. tools/corpus_delta.sh: new files copied, a seed's bytes under another name not, each
#      content once, the delta dir emptied first, a missing seed dir = empty, no corpus refused;
#   2. run-gpu-tier.sh --fuzz-seconds 1 on a fake bundle whose fake fuzzers add inputs to their
#      corpus: OUT/corpus-delta/<target>/ holds exactly the new ones, <target>.count their count,
#      the summary line keeps ledger.py's `corpus A -> B files)` text; a bundle without
#      corpus_delta.sh still runs (no delta);
#   3. tools/harness corpus-merge refuses a missing dir, an unknown target and a dir without
#      target subdirectories, before building anything (the merge itself needs --config=fuzz,
#      which this sandbox does not build: docs/nightly.md says how it was run).
set -uo pipefail
TOOLS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$TOOLS/testlib.sh"
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/corpus_delta_test.XXXXXX")
trap 'rm -rf "$T"' EXIT

# ---- 1. corpus_delta.sh ---------------------------------------------------------------------
mkdir -p "$T/u/seed" "$T/u/corpus" "$T/u/delta"
printf 'a' > "$T/u/seed/s1" && printf 'b' > "$T/u/seed/s2"
cp "$T/u/seed/"* "$T/u/corpus/"
printf 'a' > "$T/u/corpus/0c11d463c749db5838e2c0e489bf869d531e5403" # s1's bytes, libFuzzer's name
printf 'new1' > "$T/u/corpus/n1" && printf 'new1' > "$T/u/corpus/n1-again"
printf 'new 2' > "$T/u/corpus/n 2"
echo stale > "$T/u/delta/stale"
n=$(bash "$TOOLS/corpus_delta.sh" "$T/u/seed" "$T/u/corpus" "$T/u/delta")
got=$(cd "$T/u/delta" && for f in *; do printf '%s\n' "$(cat "$f")"; done | sort | tr '\n' '|')
check "corpus_delta.sh: the 2 new contents once each, no seed bytes, the old delta gone" \
    $([ "$n" = 2 ] && [ "$got" = "new 2|new1|" ] && [ ! -e "$T/u/delta/stale" ]; echo $?) \
    "count '$n', delta '$got'"
n=$(bash "$TOOLS/corpus_delta.sh" "$T/u/no-seed" "$T/u/corpus" "$T/u/delta2")
check "corpus_delta.sh: a missing seed dir counts as empty (4 distinct contents)" \
    $([ "$n" = 4 ] && [ "$(ls "$T/u/delta2" | wc -l)" -eq 4 ]; echo $?) "count '$n'"
bash "$TOOLS/corpus_delta.sh" "$T/u/seed" "$T/u/nothing" "$T/u/delta3" 2> /dev/null
check "corpus_delta.sh: a missing corpus dir is refused" $(($? == 0))

# ---- 2. run-gpu-tier.sh's fuzz_one on a fake bundle -----------------------------------------
B="$T/bundle"
mkdir -p "$B/bin" "$B/tools" "$B/fuzz/corpus/xf" "$B/fuzz/corpus/yf"
cp "$TOOLS/run-gpu-tier.sh" "$B/"
cp "$TOOLS/gpu_dispatch.sh" "$TOOLS/summarize.py" "$TOOLS/corpus_delta.sh" "$B/tools/"
echo fake > "$B/COMMIT" && : > "$B/known_failures.txt"
tar -C "$T" -cJf "$B/lib.tar.xz" --files-from /dev/null
printf '#!/bin/sh\necho "no device: fake bundle"\nexit 1\n' > "$B/bin/gpu_probe"
printf 'seed-x1' > "$B/fuzz/corpus/xf/x1" && printf 'seed-x2' > "$B/fuzz/corpus/xf/x2"
printf 'seed-y1' > "$B/fuzz/corpus/yf/y1"
# A fake libFuzzer: replays (-runs=0) do nothing; a fuzz run (-max_total_time) adds to its corpus
# (the last argument) a seed's bytes under libFuzzer's SHA-1 name (not new) and, for xf, two new
# inputs (three files, one content twice), for yf none; writes a worker log with its stats.
cat > "$B/fake_fuzzer" << 'EOF2'
#!/usr/bin/env bash
t=$(basename "$0" _fuzzer) fuzzing=0
for a in "$@"; do case $a in -max_total_time=*) fuzzing=1 ;; esac; done
c=${*: -1}
[ "$fuzzing" -eq 1 ] || exit 0
s=$(ls "$c" | head -n 1)
cp "$c/$s" "$c/$(sha1sum < "$c/$s" | cut -c1-40)"
if [ "$t" = xf ]; then
    printf 'found-1' > "$c/aaaa" && printf 'found-1' > "$c/bbbb" && printf 'found-2' > "$c/cccc"
fi
printf '#9 DONE cov: 7 ft: 9 corp: 3\nstat::number_of_executed_units: 9\n' > fuzz-0.log
EOF2
chmod +x "$B/fake_fuzzer" "$B/bin/gpu_probe"
for f in xf yf; do ln -s ../fake_fuzzer "$B/bin/${f}_fuzzer"; done
OUT="$T/o1" FUZZ_WORKERS=1 timeout 60 "$B/run-gpu-tier.sh" --filter NONE --fuzz-seconds 1 \
    > "$T/o1.log" 2>&1
check "run-gpu-tier.sh --fuzz-seconds 1 on the fake bundle: exit 0" $? "$(tail -5 "$T/o1.log")"
got=$(cd "$T/o1/corpus-delta/xf" 2> /dev/null && for f in *; do cat "$f"; echo; done | sort |
    tr '\n' ' ')
check "corpus-delta/xf/: the two new contents, once each (not the renamed seed)" \
    $([ "$got" = "found-1 found-2 " ]; echo $?) "$(ls "$T/o1/corpus-delta/xf" 2>&1): $got"
check "corpus-delta/xf.count 2, corpus-delta/yf.count 0 and yf/ empty" \
    $([ "$(cat "$T/o1/corpus-delta/xf.count")" = 2 ] &&
      [ "$(cat "$T/o1/corpus-delta/yf.count")" = 0 ] && [ -d "$T/o1/corpus-delta/yf" ] &&
      [ -z "$(ls "$T/o1/corpus-delta/yf")" ]; echo $?) \
    "$(cat "$T/o1/corpus-delta/"*.count 2>&1 | tr '\n' ' ')"
grep -qE '^fuzz_xf +ok \(.*; corpus 2 -> 6 files\)$' "$T/o1/logs/fuzz_xf.summary" &&
    grep -qE '^fuzz_yf +ok \(.*; corpus 1 -> 2 files\)$' "$T/o1/logs/fuzz_yf.summary"
check "the summary lines keep ledger.py's 'corpus A -> B files)' text" $? \
    "$(cat "$T/o1/logs/"fuzz_*.summary 2>&1)"
rm "$B/tools/corpus_delta.sh"
OUT="$T/o2" FUZZ_WORKERS=1 timeout 60 "$B/run-gpu-tier.sh" --filter NONE --fuzz-seconds 1 \
    > "$T/o2.log" 2>&1
check "a bundle without corpus_delta.sh still fuzzes (exit 0, no delta)" \
    $([ $? -eq 0 ] && [ -z "$(ls "$T/o2/corpus-delta")" ]; echo $?) "$(tail -3 "$T/o2.log")"

# ---- 3. tools/harness corpus-merge's refusals -----------------------------------------------
H="$TOOLS/harness"
msg=$("$H" corpus-merge "$T/no-such-dir" 2>&1)
check "corpus-merge: a missing dir is refused (exit 2, says so)" \
    $([ $? -eq 2 ] && [[ $msg == *"no such directory"* ]]; echo $?) "$msg"
mkdir -p "$T/m1/corpus-delta/rope_positions" "$T/m1/corpus-delta/no_such_target"
msg=$("$H" corpus-merge "$T/m1" 2>&1)
check "corpus-merge: an unknown target is refused (exit 2, names it), before any build" \
    $([ $? -eq 2 ] && [[ $msg == *"unknown fuzz target 'no_such_target'"* ]] &&
      [[ $msg != *"INFO:"* ]]; echo $?) "$msg"
mkdir -p "$T/m2"
msg=$("$H" corpus-merge "$T/m2" 2>&1)
check "corpus-merge: a dir without target subdirectories is refused" \
    $([ $? -eq 2 ] && [[ $msg == *"no target subdirectory"* ]]; echo $?) "$msg"
finish
