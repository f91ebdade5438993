#!/bin/bash
# twenty-second session, call 4: the mutation pass of absorb_q_reg_f32 (40 mutants of its new
# two-part form in kernels/mla_dense.cu), against every check that applies, killers first
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
[ -d relink ] || tar -xJf relink.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
cat COMMIT > $D/steps.txt
timeout 540 python3 tools/mutate.py run --bundle . --file mla_dense.cu --kernel absorb_q_reg_f32 \
  --jobs 16 --timeout 200 --deadline 300 --grace 200 --prime-baselines --out $D/mutate > $D/mutate.log 2>&1
echo "mutate rc=$? $((SECONDS-T0)) s" >> $D/steps.txt
sed -n '1,80p' $D/mutate/mutation-report.md
tail -5 $D/mutate.log
cat $D/steps.txt
