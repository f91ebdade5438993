#!/bin/bash
# twenty-fifth session, call 3 (kernels as at c7dc923; tools/mutate.py with every baseline
# primed): call 2's pass continued, in two runs at once, resuming call 2's one kill:
#  - run 1, the 9 mutants that passed the bf16 golden checks and tc_attn_gpu_test in call 2 and
#    were cut in its sanitizer stages: those stages only (--checks);
#  - run 2, the 3 that failed tc_attn_gpu_test in call 2 without a baseline, then 7 of the 19 not
#    started (the staging barrier, the partial-head and step-bound tests, the empty chunk's
#    stride, the loop guard, the infinite-logit flag), every bf16 check and tc_attn_gpu_test.
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
M="python3 tools/mutate.py run --bundle . --file mla_attn.cu --kernel attn_tc_bf16 --timeout 300 --sanitizer-timeout 400 --deadline 360 --grace 160 --prime-baselines"
( timeout 570 $M --ids 4724358c20,1017b45dcf,aa3f4734f7,6be71d3558,49bd9ee3e3,dc4d9bde6b,63cac309f4,78ba29bda9,305ae85c1c \
    --checks '^(racecheck|memcheck) tc_attn_gpu_test' --jobs 5 --seed 1 --out $D/mutate1 > $D/mutate1.log 2>&1; st mutate1 $? ) &
( timeout 570 $M --ids 23a9d88c41,f1bc9eb187,1d4b9ee292,7a24be0f37,79148b81b8,7f5179702a,be9f76f05c,88657229a9,83f5c17762,8dbde72724 \
    --checks 'tcbf16|tc_attn_gpu_test' --jobs 7 --seed 1 --out $D/mutate2 > $D/mutate2.log 2>&1; st mutate2 $? ) &
wait
for r in 1 2; do sed -n '1,60p' $D/mutate$r/mutation-report.md | cut -c1-260; tail -2 $D/mutate$r.log; done
cat $D/w/steps.txt
cd $D && tar -czf call3.tar.gz w mutate1 mutate2 mutate1.log mutate2.log && rm -rf w
