#!/bin/bash
# For the next session, call 3 (run it first: it is the door's next step): branch combine-tma
# (8e61fc7 as written, rebased on main at 9592ffe; rebase again if main's kernels moved). Build here:
#   git checkout combine-tma && rm -rf bundle && tools/harness bundle bundle && rm -rf bundle/golden
#   && git rev-parse --short HEAD > bundle/COMMIT
#   tools/harness perf-arm bundle/arms/main main && tools/harness perf-arm bundle/arms/tma combine-tma
#   (then `xz` each arms/*/bin/ binary; docs/perf-gate.md)
# combine-tma: the bulk combine's rows by 3-D tensor copies, 16 chunks x 256 columns (16 KiB) a
# request, 8 requests a block at decode 32K, against combine-bulk's 128 requests of 1 KiB (8.96 us,
# 43% of warp samples at the weights' barrier; the register form 6.72 us). The whole GPU tier
# with benchmarks and the goals table, the sanitizers on tc_attn's combine cases (with the new
# combine_forms_rank320__f32 and _rank128__f32: the box's zero-filled edges), the perf gate against
# main on every attention row, ncu of both combines.
# Expected (written before): every out_sha256 identical; the combine at decode 32K 6.7 -> 2.5-3.5
# us (the L2's rate would give about 2.2); the door rows at decode 8K, 32K and 128K 3-4 us faster;
# if the combine is not faster, ncu's warp samples say where its time went (the barrier again: the
# tensor copy's issue; long scoreboard on shared memory: the merge).
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
BENCH_ONLY="attn_" timeout 150 python3 tools/perf_compare.py ab --base arms/main \
  --change arms/tma --repeats 6 --benches bench_dense --out $D/w/perf-ab > $D/w/perf-ab.log 2>&1; st "perf gate" $?
for v in main tma; do
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 40 ncu --cache-control none --clock-control none \
    --kernel-name regex:"attn_combine" --launch-skip 2 --launch-count 1 --section SpeedOfLight \
    --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
    --section MemoryWorkloadAnalysis arms/$v/bin/bench_dense > $D/w/ncu-combine-$v.txt 2>&1; st "ncu combine $v" $?
done
for v in main tma; do
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 60 ncu --cache-control none --clock-control none \
    --kernel-name regex:"attn_combine" --launch-skip 2 --launch-count 1 --section WarpStateStats \
    --metrics smsp__pcsamp_sample_count,smsp__pcsamp_warps_issue_stalled_barrier,smsp__pcsamp_warps_issue_stalled_long_scoreboard,smsp__pcsamp_warps_issue_stalled_short_scoreboard,smsp__pcsamp_warps_issue_stalled_wait,l1tex__m_xbar2l1tex_read_bytes.sum,sm__cycles_active.max \
    arms/$v/bin/bench_dense > $D/w/ncu-stalls-$v.txt 2>&1; st "ncu stalls $v" $?
done
cd $D/w
tail -n 3 tier.log; cat goals.md 2>/dev/null
grep -E "Synthesis|ERROR SUMMARY|RACECHECK SUMMARY" memcheck.log racecheck.log synccheck.log | head
cat perf-ab/perf-compare.md 2>/dev/null | grep -E "^\| bench_dense|perf_compare:" | cut -d'|' -f3-10; tail -n 1 perf-ab.log
for v in main tma; do echo "== $v"; grep -E "attn_combine|Duration|L2 Cache Throughput|SM Active Cycles|Elapsed Cycles|Active Warps Per Scheduler|Issued Warp" ncu-combine-$v.txt | head -8; done
for v in main tma; do echo "== $v"; grep -E "pcsamp|cycles_active|xbar" ncu-stalls-$v.txt | head -8; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/perf-ab/perf-compare.md . 2>/dev/null; rm -rf w
