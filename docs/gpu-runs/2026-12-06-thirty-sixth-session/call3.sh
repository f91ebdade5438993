#!/bin/bash
# Thirty-sixth session, call 3: the bundle is main's (8e2132d) with beside it the branch
# wgmma-ring6's (830be7f) tc_attn_gpu_test and attn_shake_gpu_test (ring6/tests.tar.xz) and two
# perf arms (arms/main 8e2132d, arms/ring6 830be7f).
# On an H200: main's whole GPU tier with benchmarks and goals first (the done-run), then
# the experiment. On an H100: the experiment only, and the branch's cases again if faster.
# The experiment: the wgmma door's walk with a deeper f32 ring: 6 stages of 8 rows (a tile and a
# half in flight) for one bf16 tile buffer, where main has 4 stages (one tile) and two bf16
# buffers. The same tiles, the same arithmetic in the same order: only the schedule moves.
# Why (call 2): the walk is bound by what one SM takes in (main 15.1 GB/s an SM, 4.9 us a tile of
# 73.7 KB against 3.4 us at the DRAM's fair share): one tile of f32 stages in flight, refilled only
# as the converter frees it.
# Expected (written before): out_sha256 identical to main on every row; the walk at decode 32K
# 39.1 -> 33-35 us and the door row 45.1 -> about 40 us if the ring's depth binds; slower if the
# conversion, now between one tile's P . V and the next tile's logits, binds instead (its chain a
# tile about 1.7 us against the 3.4 us the DRAM share allows). The sanitizers (memcheck, racecheck,
# synccheck) on the wgmma cases: the new order of the ring's and the buffer's barriers.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
tar -C ring6 -xJf ring6/tests.tar.xz
for f in arms/*/bin/*.xz; do xz -d $f; done; chmod +x arms/*/bin/* ring6/bin/*
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT arms/*/COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if echo "$GPU" | grep -q H200; then
  OUT=$R/bundle/out timeout 230 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st "main tier (H200)" $?
  cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
  cp out/goals.md $D/ 2>/dev/null; tail -n 16 $D/w/tier.log > $D/tier-tail.txt
  tar -czf $D/w/tier-logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
fi
FW='*/@(*wgmma*|combine_forms*)'
timeout 120 ring6/bin/tc_attn_gpu_test --jobs 8 --filter "$FW" > $D/w/ring-tc.log 2>&1; st "ring6 tc_attn_gpu_test (wgmma, combine_forms)" $?
timeout 60 ring6/bin/attn_shake_gpu_test --jobs 8 > $D/w/ring-shake.log 2>&1; st "ring6 attn_shake_gpu_test" $?
BENCH_ONLY="attn_" timeout 100 python3 tools/perf_compare.py ab --base arms/main \
  --change arms/ring6 --repeats 6 --benches bench_dense,bench_kpool --out $D/w/perf-ring6 > $D/w/perf-ring6.log 2>&1; st "perf gate main->ring6" $?
FS='*/@(partial_heads__wgmma|glm5_decode__wgmma|gathered__wgmma|twin_exact__wgmma_verify|one_chunk_13_heads__wgmma|heads96__wgmma|glm5_decode_odd__wgmma)'
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 ring6/bin/tc_attn_gpu_test --jobs 7 --filter "$FS" > $D/w/ring-$tool.log 2>&1; st "ring6 $tool" $?
done
for v in main ring6; do
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 40 ncu --cache-control none --clock-control none \
    --kernel-name regex:"attn_tc_wg" --launch-skip 4 --launch-count 1 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum \
    arms/$v/bin/bench_dense > $D/w/ncu-$v.txt 2>&1; st "ncu $v" $?
done
cd $D/w
[ -f tier.log ] && { tail -n 3 tier.log; head -4 goals.md | tail -2; }
grep -E "Synthesis" ring-tc.log ring-shake.log; grep -E "FAIL" ring-tc.log | head -5
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Synthesis" ring-memcheck.log ring-racecheck.log ring-synccheck.log
echo "== perf"; cat perf-ring6/perf-compare.md 2>/dev/null | grep -E "^\| bench" | grep -E "wgmma" | cut -d'|' -f3-10; tail -n 2 perf-ring6.log
for v in main ring6; do echo "== $v"; grep -E "gpu__time|dram__|lts__|sm__thr|inst_executed" ncu-$v.txt | sed 's/  */ /g' | head -8; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/perf-ring6/perf-compare.md perf-ring6.md 2>/dev/null; rm -rf w
