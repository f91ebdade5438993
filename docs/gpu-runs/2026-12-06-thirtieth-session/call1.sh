#!/bin/bash
# Thirtieth session, call 1, at COMMIT (main; the twenty-ninth session's mends never ran on a GPU):
#  1. the GPU tier with benchmarks and the goals table (run-gpu-tier.sh --parallel --bench);
#  2. tc_attn_gpu/san_exact_alloc_inf__* plainly and under memcheck (new in the twenty-ninth);
#  3. probe_door_wgmma --rounds 3: "stream alone" (MODE 3) beside "stream + convert";
#  4. ncu of one decode-32K door call (walk + combine), once as the tier's tools do (caches
#     flushed, clocks locked) and once with --cache-control none --clock-control none, so the
#     combine's time with the partials as the walk left them in L2 is seen.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
OUT=$R/bundle/out timeout 400 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
cp out/goals.md $D/ 2>/dev/null; tail -n 16 $D/w/tier.log > $D/tier-tail.txt
export MLA_GOLDEN_DIR=$(pwd)/golden
timeout 60 bin/tc_attn_gpu_test --jobs 4 --filter 'tc_attn_gpu/san_exact_alloc_inf__*' > $D/w/inf.log 2>&1; st "exact_alloc_inf" $?
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 bin/tc_attn_gpu_test --jobs 1 --filter 'tc_attn_gpu/san_exact_alloc_inf__*' > $D/w/inf-memcheck.log 2>&1; st "exact_alloc_inf memcheck" $?
timeout 120 bin/probe_door_wgmma --rounds 3 > $D/w/probe-wgmma.md 2>&1; st probe_door_wgmma $?
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis"
BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 90 $NCU --kernel-name regex:"attn_tc_wg|attn_combine_f32" --launch-count 2 $SEC bin/bench_dense > $D/w/ncu-flushed.txt 2>&1; st "ncu flushed" $?
BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 90 $NCU --cache-control none --clock-control none --kernel-name regex:"attn_tc_wg|attn_combine_f32" --launch-skip 4 --launch-count 4 --section SpeedOfLight --section MemoryWorkloadAnalysis bin/bench_dense > $D/w/ncu-warm.txt 2>&1; st "ncu warm" $?
tar -czf $D/w/logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
cd $D/w
tail -n 16 tier.log
grep -E "Synthesis|FAIL" inf.log | tail -4; tail -n 2 inf-memcheck.log
cut -c1-260 probe-wgmma.md | head -40
for f in ncu-*.txt; do echo "== $f"; grep -E "attn_tc_wg|attn_combine|Duration|DRAM Throughput|L2 Hit|Memory Throughput|Grid Size" $f | head -30; done
head -n 40 goals.md 2>/dev/null
cat steps.txt
cd $D && tar -czf w.tar.gz w && cp w/steps.txt w/goals.md w/probe-wgmma.md . 2>/dev/null; rm -rf w
