#!/bin/bash
# Thirty-second session, call 9: bundle of main at 25ba843, plus var/: branch combine-split's
# tc_attn_gpu_test and bench_dense at the twin fix. (1) the branch's wgmma cases (the twin cases
# failed in call 8 because the twin's device path called a host function); (2) ncu on the combine
# at decode 32K, main's and the branch's, caches and clocks as the walk left them: why the
# 4-run combine saved only 0.35 us on the door row (call 8).
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
for f in var/*.xz; do xz -d $f; done; chmod +x var/*_new
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT var/COMMIT_NEW > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
timeout 60 var/tc_attn_gpu_test_new --jobs 8 --filter '*/*wgmma*' > $D/w/tc-new.log 2>&1; st "tc_attn *wgmma* (branch)" $?
for v in main new; do
  b=bin/bench_dense; [ $v = new ] && b=var/bench_dense_new
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 60 ncu --cache-control none --clock-control none \
    --kernel-name regex:"attn_combine" --launch-skip 2 --launch-count 1 --section SpeedOfLight \
    --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
    --section MemoryWorkloadAnalysis $b > $D/w/ncu-combine-$v.txt 2>&1; st "ncu combine $v" $?
done
cd $D/w
grep -E "Synthesis|\[FAIL\]" tc-new.log | head -6
for v in main new; do echo "== $v"; grep -E "attn_combine|Duration|L2 Cache Throughput|Achieved Occupancy|Active Warps Per Scheduler|Eligible Warps|No Eligible|Block Size|Grid Size|Registers Per|Stall|Warp Cycles Per Issued" ncu-combine-$v.txt | head -16; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
