#!/bin/bash
# seventeenth session, call 5: ncu counters at 06707d7, decode 32K: the default f32 walk
# (attn_walk_f32), the door (attn_tc_f32) and the combine (attn_combine_f32), for the goals missed
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
mkdir -p $D/w; W=$D/w
cat COMMIT > $W/steps.txt
M=gpu__time_duration.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.sum,smsp__cycles_active.avg,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct
BENCH_ONLY="attn_absorbed decode " timeout 200 ncu --clock-control none --kernel-name regex:attn_walk_f32 --launch-skip 2 --launch-count 1 --metrics $M bin/bench_dense 5 > $W/ncu-default.txt 2>&1
echo "ncu default rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
BENCH_ONLY="attn_absorbed decode TC door: tf32" timeout 200 ncu --clock-control none --kernel-name regex:"attn_tc_f32|attn_combine_f32" --launch-skip 2 --launch-count 2 --metrics $M bin/bench_dense 5 > $W/ncu-door.txt 2>&1
echo "ncu door rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
cd $W
for f in ncu-*.txt; do echo "== $f"; awk '/^  [a-zA-Z_<]/{k=$1} /__/{print substr(k,1,30), $1, $NF}' $f | head -60; done
cat steps.txt
cd $D && tar -czf /tmp/call5.tar.gz -C w . && rm -rf $D/w && mv /tmp/call5.tar.gz $D/
