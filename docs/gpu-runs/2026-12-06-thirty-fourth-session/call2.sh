#!/bin/bash
# For the next session, call 2: the bundle of branch combine-vec2 (next-call1.sh's), plus
#  - var/: branch combine-allflight's tc_attn_gpu_test, dense_gpu_goldens_test and bench_dense
#    (<name>_new.xz; its short hash in var/COMMIT_NEW);
#  - arms/vec2 and arms/allflight: the perf gate's arms (`tools/harness perf-arm
#    bundle/arms/<name> <branch>`, then `xz` each bin/ binary; docs/perf-gate.md).
# combine-allflight: from 65 chunks one column a thread in batches of 64 (every chunk in flight;
# 1,024 warps at glm5 decode against 512). Expected (written before): the same out_sha256 on every
# row; the combine at decode 32K 6.46 -> about 4 us (ncu), the wgmma and bf16 door rows at decode
# 1.5-2.5 us faster; the f32 plan's rows at 8K and 32K (64 chunks: the same kernel) within noise.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
for f in var/*.xz arms/*/bin/*.xz; do xz -d $f; done; chmod +x var/*_new arms/*/bin/*
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT var/COMMIT_NEW > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
timeout 100 var/tc_attn_gpu_test_new --jobs 12 > $D/w/tc-new.log 2>&1; st "tc_attn whole (allflight)" $?
timeout 100 var/dense_gpu_goldens_test_new --jobs 12 --filter '*/*__attn_*' > $D/w/dense-new.log 2>&1; st "dense goldens attn_* (allflight)" $?
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 var/tc_attn_gpu_test_new --jobs 5 --filter '*/@(combine_forms*|glm5_decode__*)' > $D/w/memcheck-new.log 2>&1; st "memcheck tc_attn subset (allflight)" $?
# the perf gate (docs/perf-gate.md): 6 interleaved repeats, the attention decode rows only
BENCH_ONLY="attn_absorbed decode" timeout 200 python3 tools/perf_compare.py ab --base arms/vec2 \
  --change arms/allflight --repeats 6 --benches bench_dense --out $D/w/perf-ab > $D/w/perf-ab.log 2>&1; st "perf gate" $?
for v in vec2 allflight; do
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 40 ncu --cache-control none --clock-control none \
    --kernel-name regex:"attn_combine" --launch-skip 2 --launch-count 1 --section SpeedOfLight \
    --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
    --section MemoryWorkloadAnalysis arms/$v/bin/bench_dense > $D/w/ncu-combine-$v.txt 2>&1; st "ncu combine $v" $?
done
cd $D/w
grep -E "Synthesis|\[FAIL\]|ERROR SUMMARY" tc-new.log dense-new.log memcheck-new.log | head
cat perf-ab/perf-compare.md 2>/dev/null; tail -n 2 perf-ab.log
for v in vec2 allflight; do echo "== $v"; grep -E "attn_combine|Duration|L2 Cache Throughput|Active Warps Per Scheduler|Issued Warp|Warp Cycles Per Issued" ncu-combine-$v.txt | head -8; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/perf-ab/perf-compare.md . 2>/dev/null; rm -rf w
