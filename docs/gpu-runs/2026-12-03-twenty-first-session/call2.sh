#!/bin/bash
# twenty-first session, call 2: the mutation pass of the new operator CVT (13 mutants of
# kernels/mla_attn.cu: a TF32 conversion helper's call replaced by the raw bits), against the tf32
# door's golden stage checks in both suites and tc_attn_gpu_test whole (the other checks run the
# f32 or 3xtf32 arms, which do not call these helpers)
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
[ -d relink ] || tar -xJf relink.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
cat COMMIT > $D/steps.txt
timeout 560 python3 tools/mutate.py run --bundle . --operator CVT --checks 'tctf32|^tc_attn_gpu_test$' \
  --jobs 13 --timeout 240 --deadline 120 --grace 400 --out $D/mutate > $D/mutate.log 2>&1
echo "mutate rc=$? $((SECONDS-T0)) s" >> $D/steps.txt
sed -n '1,70p' $D/mutate/mutation-report.md
tail -5 $D/mutate.log
cat $D/steps.txt
