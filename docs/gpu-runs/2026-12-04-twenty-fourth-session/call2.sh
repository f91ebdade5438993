#!/bin/bash
# twenty-fourth session, call 2: the bf16 door's q staged through buffer 1 (two 32-head halves by
# cp.async) against a836a07's direct global loads: probe_door_arms of both commits in interleaved
# rounds; then the GPU tier's tests and benchmarks at the new commit (bench_dense's out_sha256
# compared with call 1's: the change must keep every byte); then the four sanitizers over
# tc_attn_gpu_test's sanitizer cases (the new shared-memory staging).
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; }
cat COMMIT > $D/w/steps.txt
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
for r in 1 2; do
  timeout 60 ./probe_base --rounds 3 > $D/w/probe-base-$r.md 2>&1; st probe_base_$r $?
  timeout 60 bin/probe_door_arms --rounds 3 > $D/w/probe-new-$r.md 2>&1; st probe_new_$r $?
done
OUT=$R/bundle/out timeout 330 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
cp out/goals.md out/bench-*.json out/peer-torch.json $D/w/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH MLA_GOLDEN_DIR=$(pwd)/golden
F='*/@(partial_heads__*|declines_uncovered|bad_arguments|low_payload_nan__*|inf_rope__*|cache_4byte_aligned__*|q_4byte_aligned__*|q_4byte_aligned_bf16__*|declines_wide__bf16|glm5_next_decode__bf16|small_rank__*)'
for tool in memcheck racecheck initcheck synccheck; do
  ( timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 bin/tc_attn_gpu_test -j2 --filter="$F" > $D/w/san_$tool.txt 2>&1; st san_$tool $? ) &
done
wait
tar -czf $D/w/logs.tar.gz out/logs out/*.log out/*.json out/*.md 2>/dev/null
cd $D/w
for f in probe-*.md; do echo "== $f"; grep -E "^\| (decode|verify)" $f; done
tail -8 tier.log
head -12 goals.md
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Synthesis" san_*.txt
cat steps.txt
cd $D && tar -czf call2.tar.gz -C w . && rm -rf w
