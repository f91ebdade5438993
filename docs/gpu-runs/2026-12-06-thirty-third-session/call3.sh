#!/bin/bash
# Thirty-third session, call 3: bundle of main at the shake fix (see COMMIT), plus var/: branch
# combine-split's tc_attn_gpu_test and bench_dense (at 1d3d0cc, the twin fix).
#  1. attn_shake_gpu_test (the new empty_partial_nan_ws_64h cases; the delay now at least 100 us by
#     %globaltimer) plain and under memcheck; select_shake_gpu_test plain, timed (its delays are now
#     at least 50 us each: the tier's run took 10 s with __nanosleep).
#  2. mutation: the call-2 survivors that are not ledger equivalents (6268a0edb0, 3e5ee81b9b: the
#     empty partial one head short of the tile, expected killed by the 64-head cases; 0ffef8802d,
#     h <= n_head, with its twin 49f0f198e4, h < n_head + 1: expected killed both, now that the late
#     write is late) and the four single-chunk o_lat store guards one head long (9c535ba7e0,
#     777ce0d2b2, 94a422e561, 3050879202), all under the wgmma cases, attn_shake, the wgmma goldens
#     and memcheck of tc_attn and the goldens' attn_tc set.
#  3. the branch's wgmma cases (twin_exact failed in call 8 of the thirty-second session), and ncu
#     on the combine at decode 32K, main's and the branch's.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
tar -xJf relink.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
for f in var/*.xz; do xz -d $f; done; chmod +x var/*_new
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT var/COMMIT_NEW > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
t=$SECONDS; timeout 90 bin/attn_shake_gpu_test --jobs 8 > $D/w/shake.log 2>&1; st "attn_shake plain ($((SECONDS-t)) s)" $?
t=$SECONDS; timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 bin/attn_shake_gpu_test --jobs 8 > $D/w/shake-memcheck.log 2>&1; st "attn_shake memcheck ($((SECONDS-t)) s)" $?
t=$SECONDS; timeout 90 bin/select_shake_gpu_test --jobs 4 > $D/w/select-shake.log 2>&1; st "select_shake plain ($((SECONDS-t)) s)" $?
IDS=6268a0edb0,3e5ee81b9b,0ffef8802d,49f0f198e4,9c535ba7e0,777ce0d2b2,94a422e561,3050879202
timeout 330 python3 tools/mutate.py run --bundle . --ids $IDS \
  --checks '^(tc_attn_gpu_test --filter=\*/\*wgmma\*|(memcheck )?attn_shake_gpu_test|dense_gpu_goldens_test --filter=.*tcwgmma.*|memcheck (tc_attn_gpu_test|dense_gpu_goldens_test\.attn_tc))$' \
  --jobs 8 --timeout 200 --sanitizer-timeout 200 --deadline 240 --grace 60 --prime-baselines \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st mutate $?
timeout 60 var/tc_attn_gpu_test_new --jobs 8 --filter '*/*wgmma*' > $D/w/tc-new.log 2>&1; st "tc_attn *wgmma* (branch)" $?
for v in main new; do
  b=bin/bench_dense; [ $v = new ] && b=var/bench_dense_new
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 60 ncu --cache-control none --clock-control none \
    --kernel-name regex:"attn_combine" --launch-skip 2 --launch-count 1 --section SpeedOfLight \
    --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
    --section MemoryWorkloadAnalysis $b > $D/w/ncu-combine-$v.txt 2>&1; st "ncu combine $v" $?
done
cd $D/w
grep -E "Synthesis|\[FAIL\]" shake.log shake-memcheck.log select-shake.log tc-new.log | head -12
grep -E "ERROR SUMMARY" shake-memcheck.log | tail -1
sed -n '/Score per file/,/Survivors/p' mutate/mutation-report.md | grep "^|" | cut -c1-200
grep "^- \`kernels" mutate/mutation-report.md | cut -c1-220
sed -n '/Killed: by which/,/Where the time/p' mutate/mutation-report.md | grep "^| [0-9a-f]" | cut -c1-220
for v in main new; do echo "== $v"; grep -E "attn_combine|Duration|L2 Cache Throughput|Achieved Occupancy|Active Warps Per Scheduler|Eligible Warps|No Eligible|Block Size|Grid Size|Registers Per|Warp Cycles Per Issued" ncu-combine-$v.txt | head -14; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
