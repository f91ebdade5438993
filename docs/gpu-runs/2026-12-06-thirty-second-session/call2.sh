#!/bin/bash
# Thirty-second session, call 2 (bundle of main at 12e2473, the same as call 1): the 7 wgmma
# mutants call 1 left undecided (cut at the hard stop in dense_gpu_goldens_test's sanitizer set,
# before memcheck of tc_attn_gpu_test's narrowed set ran), now with memcheck only: of
# tc_attn_gpu_test's small set narrowed to the wgmma cases (san_exact_alloc*__wgmma among them)
# and dense_gpu_goldens_test's attn_tc set. Predicted: the four out-of-bounds mutants killed,
# 06e2917037 / 5e34aad08a (undefined behaviour) and 290780ddcc (hidden race) survive.
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
IDS=290780ddcc,42997d7de9,5b35232cf7,7ba96063c2,5e34aad08a,53e36edcbf,06e2917037
timeout 420 python3 tools/mutate.py run --bundle . --file mla_attn_wg.cu --ids $IDS \
  --checks '^memcheck (tc_attn_gpu_test|dense_gpu_goldens_test\.attn_tc)$' \
  --jobs 7 --timeout 300 --sanitizer-timeout 300 --deadline 330 --grace 60 --prime-baselines \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st mutate $?
cd $D/w
sed -n '1,60p' mutate/mutation-report.md | cut -c1-300
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
