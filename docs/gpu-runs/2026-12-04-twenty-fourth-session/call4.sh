#!/bin/bash
# twenty-fourth session, call 4, at c7dc923: the 22 q-staging mutants call 3 left without a verdict
# (15 cut at the hard stop in decode_split_gpu_test, 7 not started), against tc_attn_gpu_test and
# its sanitizer stages only (--checks): the unaligned-q path, the partial head tiles and the
# step bounds are reached there (a kill is a kill; a survivor survived only these checks).
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
[ -d relink ] || tar -xJf relink.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; }
cat COMMIT > $D/w/steps.txt
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
timeout 240 python3 tools/mutate.py run --bundle . --file mla_attn.cu --kernel attn_tc_bf16 --ids 1935fa5bff,5db3f34f1e,fda83c9f51,7853adf76d,f663e78fa6,6990366d1b,2266991c98,f1c1c1582b,0779ab791d,801d0b4b07,724b06ffe8,0a392781b6,27354343b5,26889b4a92,31224799e6,f9a0e555e8,b5035b298a,6dec24ebc6,49def81466,7d98234b7d,488062cc16,b79372b96d \
  --checks 'tc_attn_gpu_test' --jobs 16 --timeout 150 --sanitizer-timeout 150 --deadline 110 --grace 110 --prime-baselines --out $D/mutate > $D/mutate.log 2>&1; st mutate $?
sed -n '1,60p' $D/mutate/mutation-report.md
tail -3 $D/mutate.log
cat $D/w/steps.txt
cd $D && tar -czf call4.tar.gz w mutate mutate.log && rm -rf w
