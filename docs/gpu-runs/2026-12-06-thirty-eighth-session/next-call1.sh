#!/bin/bash
# For the next session (written in the thirty-eighth; not run). Carry .gpu/next2 (8.4 MB); run
# "bash .gpu/next2/call.sh" from the repository root; any card (correctness first, then a perf
# gate whose two arms run in the same call).
# 1. Branch dense-exact-alloc (89e5c59): dense_gpu/san_exact_alloc__{absorb_q,decompress_v}
#    unmutated (plain; memcheck, racecheck, synccheck over the narrowed absorb_q set), then under
#    memcheck with absorb_q_reg_f32's 4 survivors of the thirty-eighth session's call 2 (binaries
#    built with tools/mutate.py apply). Expected: all unmutated pass; b80b4ba022 killed by memcheck
#    (q_nope read one past the last head); f041f82eac, 26133a26b3, 4fb65a60cd pass (their writes
#    land in carry, before the barrier that precedes carry's first write) -> ledger them with
#    that evidence, merge the branch.
# 2. The perf gate main (492078c's device code = main since b408b31) -> gate (branch qprep-gate
#    4f58897: no q preparation where a block walks under one 64-row tile). Expected: gathered t_q 1
#    back to main-before-qprep's time (25.25 -> about 23.7 us on the H200), every other row
#    unchanged (their chunks are >= 64 rows), bytes identical.
D=$OUT; R=$(pwd); cd .gpu/next2
mkdir -p out && tar -C out -xJf lib.tar.xz && xz -d bin/*.xz arms/*/bin/*.xz && chmod +x bin/* arms/*/bin/*
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$R/golden
F='*/san_exact_alloc__@(absorb_q|decompress_v)'
N='*/@(san_*__absorb_q|bad_arguments_write_nothing)'
r() { local name=$1; shift; local t0=$SECONDS; timeout 120 "$@" > $D/$name.log 2>&1; echo "$name rc=$? $((SECONDS-t0)) s" >> $D/table.txt; }
r plain bin/dense_unmutated --filter="$F" --jobs 2 --verbose
for tool in memcheck racecheck synccheck; do
  r unmutated-$tool compute-sanitizer --tool $tool --error-exitcode 9 bin/dense_unmutated --filter="$N" --jobs 2
done
for id in b80b4ba022 f041f82eac 26133a26b3 4fb65a60cd; do r $id-values bin/dense_$id --filter="$F" --jobs 2 & done; wait
for id in b80b4ba022 f041f82eac 26133a26b3 4fb65a60cd; do
  r $id-memcheck compute-sanitizer --tool memcheck --error-exitcode 9 bin/dense_$id --filter="$N" --jobs 2 &
done; wait
BENCH_ONLY="attn_" timeout 200 python3 $R/tools/perf_compare.py ab --base arms/main --change arms/gate \
  --repeats 6 --benches bench_dense,bench_kpool --out $D/perf-gate > $D/perf-gate.log 2>&1
echo "perf gate rc=$?" >> $D/table.txt
cd $D; grep -h -E "Synthesis|ERROR SUMMARY|RACECHECK SUMMARY" *.log | sort | uniq -c
grep -h -m3 -E "Invalid|out of bounds" b80b4ba022-memcheck.log | cut -c1-200
grep -E "^\| bench" perf-gate/perf-compare.md 2>/dev/null | grep wgmma | cut -d'|' -f3-10; tail -n 1 perf-gate.log
cat table.txt
