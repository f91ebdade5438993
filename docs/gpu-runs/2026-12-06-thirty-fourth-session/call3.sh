#!/bin/bash
# Thirty-fourth session, call 3: branch combine-bulk (bundle at the commit in bundle/COMMIT):
# attn_combine_bulk_f32 (each chunk's row of a 256-column slab by bulk copies into shared memory,
# merged from there; the register forms' chains). The whole GPU tier with benchmarks and the goals
# table (every attention fixture, twin_exact, combine_forms incl. the new rank126 case, the
# identities), then memcheck, racecheck and synccheck on the combine's cases, the perf gate against
# main's kernels (arms/vec2: combine-vec2 at d83c44d, the same kernel sources as main 77aeceb) on
# every attention row, and ncu of the combine at decode 32K (wgmma door) in both arms.
# Expected (written before): every out_sha256 identical; the combine at decode 32K 6.8 -> 3-3.5 us
# (ncu); the door rows at decode 32K and 128K about 3 us faster; verify/prefill within noise or
# better.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
for f in arms/*/bin/*.xz; do xz -d $f; done; chmod +x arms/*/bin/*
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT arms/*/COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
OUT=$R/bundle/out timeout 300 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
cp out/goals.md $D/ 2>/dev/null; tail -n 16 $D/w/tier.log > $D/tier-tail.txt
tar -czf $D/w/tier-logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
F='*/@(combine_forms*|twin_exact__*|glm5_decode__*|one_chunk_*)'
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 bin/tc_attn_gpu_test --jobs 6 --filter "$F" > $D/w/$tool.log 2>&1; st "tc_attn $tool" $?
done
BENCH_ONLY="attn_" timeout 150 python3 tools/perf_compare.py ab --base arms/vec2 \
  --change arms/bulk --repeats 6 --benches bench_dense --out $D/w/perf-ab > $D/w/perf-ab.log 2>&1; st "perf gate" $?
for v in vec2 bulk; do
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 40 ncu --cache-control none --clock-control none \
    --kernel-name regex:"attn_combine" --launch-skip 2 --launch-count 1 --section SpeedOfLight \
    --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
    --section MemoryWorkloadAnalysis arms/$v/bin/bench_dense > $D/w/ncu-combine-$v.txt 2>&1; st "ncu combine $v" $?
done
cd $D/w
tail -n 3 tier.log; cat goals.md 2>/dev/null
grep -E "Synthesis|ERROR SUMMARY|RACECHECK SUMMARY" memcheck.log racecheck.log synccheck.log | head
cat perf-ab/perf-compare.md 2>/dev/null | grep -E "^\| bench_dense|perf_compare:" | cut -d'|' -f3-10; tail -n 1 perf-ab.log
for v in vec2 bulk; do echo "== $v"; grep -E "attn_combine|Duration|L2 Cache Throughput|SM Active Cycles|Elapsed Cycles|Active Warps Per Scheduler|Issued Warp" ncu-combine-$v.txt | head -8; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/perf-ab/perf-compare.md . 2>/dev/null; rm -rf w
