#!/bin/bash
# twenty-fifth session, call 2, at 1e35e2c (kernels as at c7dc923, cubin byte-identical): the
# mutation pass owed on attn_tc_bf16. The 21 mutants of the q staging without a verdict
# (twenty-fourth session, calls 3-4) and the 11 older bf16 ids (twenty-third session, call 5),
# against the bf16 arm's golden checks and tc_attn_gpu_test with its sanitizer stages (--checks):
# the unaligned-q path, the partial head tiles and the step bounds are reached there. 12 workers,
# timeouts long enough that no unmutated check times out under the load (CheckLoad decides the
# rest); a cut pass resumes in the next call (--resume).
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
  --checks 'tcbf16|tc_attn_gpu_test' --jobs 12 --timeout 300 --sanitizer-timeout 400 --deadline ${DL:-400} --grace ${GR:-150} \
  --prime-baselines "${RES[@]}" --out $D/mutate > $D/mutate.log 2>&1; st mutate $?
sed -n '1,80p' $D/mutate/mutation-report.md | cut -c1-300
tail -3 $D/mutate.log
cat $D/w/steps.txt
cd $D && tar -czf mutate.tar.gz w mutate mutate.log && rm -rf w
