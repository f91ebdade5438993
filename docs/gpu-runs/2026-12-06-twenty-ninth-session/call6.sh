#!/bin/bash
# Twenty-ninth session, call 6: a first mutation sample of the wgmma door arm
# (kernels/mla_attn_wg.cu at 2cb2481, 190 mutants after the ledger's 23 equivalents; owed since
# the twenty-eighth session): 40 drawn (seed 29), against the checks that reach the arm (the
# golden suites' tcwgmma cases, tc_attn_gpu_test, attn_shake_gpu_test), 16 at a time, new
# mutants stopped at 300 s. A sample, not the file's score.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
[ -d relink ] || tar -xJf relink.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
cat COMMIT > $D/steps.txt
nvidia-smi --query-gpu=name --format=csv,noheader >> $D/steps.txt
timeout 520 python3 tools/mutate.py run --bundle . --file mla_attn_wg.cu --sample 40 --seed 29 \
  --checks 'tcwgmma|tc_attn_gpu_test|attn_shake_gpu_test' \
  --jobs 16 --timeout 150 --sanitizer-timeout 200 --deadline 300 --grace 150 --prime-baselines \
  --out $D/mutate > $D/mutate.log 2>&1
echo "mutate rc=$? $((SECONDS-T0)) s" >> $D/steps.txt
sed -n '1,90p' $D/mutate/mutation-report.md
tail -5 $D/mutate.log
cat $D/steps.txt
