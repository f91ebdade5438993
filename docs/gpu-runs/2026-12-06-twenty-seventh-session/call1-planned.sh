#!/bin/bash
# Written in the twenty-sixth session as next-call1.sh; run as the twenty-seventh session's call 1.
# 1. probe_door_pingpong (tools/bench, the ping-pong prototype of the bf16 door: docs/performance.md,
#    "Twenty-sixth session"): its rows beside the bf16 and tf32 arms, bytes of both schedules
#    compared; it exits 1 on a broken row. If it hangs (a barrier protocol error), the timeout
#    says so and the tier still runs.
# 2. The tier's tests and benchmarks, without the sanitizer tier (call 2): the untested test code
#    of the twenty-fifth and twenty-sixth sessions runs here (tc_attn_gpu/san_exact_alloc__*,
#    kpool_identities on exact allocations, attn_shake/empty_partial_nan_ws__*). Its 300 s is a
#    guess (no session timed tests + bench without the sanitizer tier); if it is cut, run the
#    tier alone next.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
timeout 120 bin/probe_door_pingpong --rounds 3 > $D/w/probe-pingpong.md 2>&1; st probe_door_pingpong $?
# its untimed rows (the ring wrap-arounds included) under racecheck and synccheck: the barrier
# protocol's hazards, and a hang cut by the timeout
for tool in racecheck synccheck; do
  timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool $tool --error-exitcode 3 bin/probe_door_pingpong --check > $D/w/probe-pingpong-$tool.txt 2>&1; st "probe --check $tool" $?
done
# the first row's kernels (decode 32K: bf16 walk + combine, pp free, pp turns) under ncu, clocks
# untouched: where each walk's time goes (added in the twenty-seventh session)
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
timeout 100 $NCU --clock-control none --kernel-name regex:"pp_walk|attn_tc_bf16|pp_combine|attn_combine" --launch-count 6 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy -f -o $D/w/pp bin/probe_door_pingpong --once > $D/w/ncu.log 2>&1; st ncu $?
timeout 30 $NCU -i $D/w/pp.ncu-rep --page raw --csv --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__warps_eligible.avg.per_cycle_active,dram__bytes_read.sum,dram__bytes_write.sum > $D/w/pp-raw.csv 2>&1; st raw $?
timeout 30 $NCU -i $D/w/pp.ncu-rep --page details > $D/w/pp-details.txt 2>&1; gzip -f $D/w/pp-details.txt
OUT=$R/bundle/out timeout 300 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
cp out/goals.md out/bench-*.json out/peer-torch.json $D/w/ 2>/dev/null
tar -czf $D/w/logs.tar.gz out/logs out/*.log out/*.json out/*.md 2>/dev/null
cd $D/w
cat probe-pingpong.md
cut -d, -f1-4,12- pp-raw.csv | cut -c1-300 | head -12
tail -3 probe-pingpong-racecheck.txt probe-pingpong-synccheck.txt
tail -14 tier.log
head -40 goals.md 2>/dev/null
cat steps.txt
# at most 8 files come back: everything in one archive, the short ones beside it
cd $D && tar -czf w.tar.gz w && cp w/steps.txt w/probe-pingpong.md w/goals.md . 2>/dev/null; rm -rf w
