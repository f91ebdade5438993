#!/bin/bash
# Thirty-eighth session, call 3: dense_gpu/san_exact_alloc__{absorb_q,decompress_v} (new, uncommitted
# at b408b31) unmutated (plain, memcheck, racecheck, synccheck) and under memcheck with absorb_q's
# 4 survivors of call 2 (binaries built here with the mutant applied).
# Expected (written before): unmutated all pass, 0 errors; b80b4ba022 (q load <=) killed by
# memcheck (a read one past q_nope for the last head); the three qs-store mutants (844) pass
# memcheck: their write lands in carry, inside the block's shared window, before the barrier.
D=$OUT; cd .gpu/c3
mkdir -p out && tar -C out -xJf lib.tar.xz && xz -d bin/*.xz && chmod +x bin/*
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/../../golden
F='*/san_exact_alloc__@(absorb_q|decompress_v)'
N='*/@(san_*__absorb_q|bad_arguments_write_nothing)'
r() { local name=$1; shift; local t0=$SECONDS; timeout 120 "$@" > $D/$name.log 2>&1; echo "$name rc=$? $((SECONDS-t0)) s" >> $D/table.txt; }
r plain bin/dense_unmutated --filter="$F" --jobs 2 --verbose
for tool in memcheck racecheck synccheck; do
  r unmutated-$tool compute-sanitizer --tool $tool --error-exitcode 9 bin/dense_unmutated --filter="$N" --jobs 2
done
for id in b80b4ba022 f041f82eac 26133a26b3 4fb65a60cd; do
  r $id-values bin/dense_$id --filter="$F" --jobs 2 &
done; wait
for id in b80b4ba022 f041f82eac 26133a26b3 4fb65a60cd; do
  r $id-memcheck compute-sanitizer --tool memcheck --error-exitcode 9 bin/dense_$id --filter="$N" --jobs 2 &
done; wait
cd $D; grep -h -E "Synthesis|ERROR SUMMARY|RACECHECK SUMMARY" *.log | sort | uniq -c
grep -h -m3 -E "Invalid|out of bounds|Assertion|FAIL" b80b4ba022-memcheck.log | cut -c1-200
cat table.txt
