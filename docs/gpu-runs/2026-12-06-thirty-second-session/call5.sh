#!/bin/bash
# Thirty-second session, call 5 (bundle of main at 25ba843: the no-rare-path wgmma arm merged,
# attn_shake's stray_rows_5h__<arm> added). 
#  1. attn_shake_gpu_test whole, then under memcheck (the shake build's exact workspace);
#  2. mutation, checks attn_shake_gpu_test and its memcheck only, of the wgmma epilogue's twelve
#     "one head past n_head" guards (ids at 25ba843): the partial row stores (418 ha, 424 hb),
#     the (m, l, flags) stores (431, 437) and the single-chunk output stores (447, 455), REL and
#     OFF1 each. Predicted: 418/424 killed by memcheck (stray_rows_5h__wgmma / stray_rows__wgmma),
#     431/437 by value or memcheck, 447/455 (o_lat, one chunk: not a shake geometry) may survive
#     here (the golden and tc_attn cases' exact outputs reach them).
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
tar -xJf relink.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
timeout 90 bin/attn_shake_gpu_test --jobs 4 --verbose > $D/w/shake.log 2>&1; st "attn_shake" $?
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 bin/attn_shake_gpu_test --jobs 1 > $D/w/shake-memcheck.log 2>&1; st "memcheck attn_shake" $?
IDS=e0d214fbec,ee7028ab72,e0ff7e3a6c,8674b89a32,d4802e4e9a,4476a914a9,2d4f163e0a,f45e1a22fc
IDS=$IDS,9c535ba7e0,777ce0d2b2,94a422e561,3050879202
timeout 300 python3 tools/mutate.py run --bundle . --ids $IDS \
  --checks '^(memcheck )?attn_shake_gpu_test$' \
  --jobs 12 --timeout 200 --sanitizer-timeout 200 --deadline 220 --grace 60 --prime-baselines \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st mutate $?
cd $D/w
grep -E "Synthesis|\[FAIL\]" shake.log | head -12
grep -E "ERROR SUMMARY|Synthesis" shake-memcheck.log
sed -n '/Score per file/,/The next pass/p' mutate/mutation-report.md | cut -c1-200
sed -n '/Killed: by which/,/Where the time/p' mutate/mutation-report.md | grep "^| [0-9a-f]" | cut -c1-200
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
