#!/bin/bash
# Thirty-second session, call 3 (bundle of main at 502e43b): the shake build's new powers.
#  1. attn_shake_gpu_test whole (the new stray_rows__<arm>, t_kv 225, and every earlier case),
#     then under memcheck (its small set is every case: the exact workspace of the shake build);
#  2. mutation, checks attn_shake_gpu_test and its memcheck only: the wgmma arm's two survivors of
#     call 2 (the empty partial's ml loop one head long, 4b1cac6078 = 290780ddcc at 12e2473; the
#     live partial row store one head long, 5ed27b5e6e = 42997d7de9) and their same-meaning twins
#     (742f95089c, 3796fd329c); and, as a probe of the new cases' reach on the other arms, the
#     12 "one head past n_head" guards of mla_attn.cu's split walks (f32, tf32, bf16: the empty
#     partial's o and ml loops, the live partial's o and ml stores). Predicted: the wgmma four
#     killed (the first two by the value check through the late empty partial, the others by
#     memcheck); of the probe, the empty-partial ml loops killed by value, the rest unknown.
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
IDS=4b1cac6078,742f95089c,5ed27b5e6e,3796fd329c
IDS=$IDS,6129511682,68f846fbe4,b3268c5bf2,fe3393a903,29885e7f4a,f7e9b50bd8,96e645d528,5415bb5f4d
IDS=$IDS,ad06f6c160,16bd94ed39,01410e8ddd,9bb37574b9
timeout 330 python3 tools/mutate.py run --bundle . --ids $IDS \
  --checks '^(memcheck )?attn_shake_gpu_test$' \
  --jobs 8 --timeout 200 --sanitizer-timeout 200 --deadline 250 --grace 60 --prime-baselines \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st mutate $?
cd $D/w
grep -E "Synthesis|FAIL|\[FAIL\]" shake.log | head -12
grep -E "ERROR SUMMARY|Synthesis" shake-memcheck.log
sed -n '1,40p' mutate/mutation-report.md | cut -c1-240
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
