#!/bin/bash
# Written in the twenty-sixth session (no device lent), NOT RUN: the owed attn_tc_bf16 mutants
# (docs/mutation.md), 83f5c17762 first (the NaN-filled workspace of the shake build should kill
# it in attn_shake_gpu_test), with attn_shake_gpu_test among the checks. IDS from
# docs/mutation.md; about 12 mutants a 600 s call at 12 workers; a cut pass resumes (--resume).
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
RES=(); [ -f resume.json ] && RES=(--resume resume.json)
timeout 575 python3 tools/mutate.py run --bundle . --file mla_attn.cu --kernel attn_tc_bf16 --ids ${IDS:?} \
  --checks 'tcbf16|tc_attn_gpu_test|attn_shake_gpu_test' --jobs 12 --timeout 300 --sanitizer-timeout 400 \
  --deadline ${DL:-400} --grace ${GR:-150} --prime-baselines "${RES[@]}" --out $D/mutate > $D/mutate.log 2>&1; st mutate $?
sed -n '1,80p' $D/mutate/mutation-report.md | cut -c1-300
tail -3 $D/mutate.log
cat $D/w/steps.txt
cd $D && tar -czf mutate.tar.gz w mutate mutate.log && rm -rf w
