#!/bin/bash
# twenty-fourth session, call 3, at c7dc923 (call 2's bundle): racecheck over dense_gpu_goldens_test's
# sanitizer cases, as the tier runs it (call 1 cut it at the call's 300 s; the tier's default is
# 420), alone on the GPU while a mutation pass builds; then the mutation pass over the 31 mutants of
# the bf16 door's new q staging (lines 1403-1453), every check that applies.
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
( timeout 520 compute-sanitizer --tool racecheck --error-exitcode 1 --target-processes all bin/dense_gpu_goldens_test --jobs 1 --filter '*/@(san_*|bad_arguments_write_nothing)' > $D/w/san_racecheck_dense.txt 2>&1; st racecheck_dense $? ) &
timeout 530 python3 tools/mutate.py run --bundle . --file mla_attn.cu --kernel attn_tc_bf16 --ids 7d98234b7d,0779ab791d,801d0b4b07,bdc22dec89,b79372b96d,bf80930246,80a1fdc4a0,ac59af8875,488062cc16,e3132ad3a7,fda83c9f51,5db3f34f1e,7853adf76d,dbdc382fb1,f663e78fa6,6990366d1b,2266991c98,1935fa5bff,f1c1c1582b,b5035b298a,6dec24ebc6,bb5d89c472,f9a0e555e8,31224799e6,26889b4a92,0a392781b6,724b06ffe8,27354343b5,bae13620f9,49def81466,f23ecf95ed \
  --jobs 16 --timeout 150 --sanitizer-timeout 250 --deadline 330 --grace 150 --prime-baselines --out $D/mutate > $D/mutate.log 2>&1; st mutate $?
wait
cd $D/w
grep -E "RACECHECK SUMMARY|Synthesis" san_racecheck_dense.txt
sed -n '1,70p' $D/mutate/mutation-report.md
tail -4 $D/mutate.log
cat steps.txt
cd $D && tar -czf call3.tar.gz w mutate mutate.log && rm -rf w
