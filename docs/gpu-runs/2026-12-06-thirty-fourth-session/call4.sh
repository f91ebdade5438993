#!/bin/bash
# Thirty-fourth session, call 4 (bundle of branch combine-bulk; tools/mutate.py with
# KERNEL_CASE_TOKENS): the bf16 door's 24 owed mutants (docs/mutation.md, "Still owed"), remapped
# by content onto this bundle's mla_attn.cu (one-to-one; call4-remap.txt). attn_tc_bf16's mutants
# run tc_attn_gpu_test's bf16 cases only. Predicted: the 3 unconfirmed value kills (3f3c20ca78,
# 6927fd3629, dae7df9135) killed by a value check; the reads past q (819d634099, fb0e5b6c8e,
# bed88f4570) by memcheck; the half-written empty partial (0934d43c46) by attn_shake's NaN
# workspace.
set -o pipefail
D=$OUT; T0=$SECONDS; DL=${DEADLINE:-400}
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
IDS=0934d43c46,d54aabfc1e,6927fd3629,bed88f4570,5d31d5624e,0000887de4,fb0e5b6c8e,819d634099,3f3c20ca78,4eb16ad081,b762375b6d,38c3505f40,bfc7d62774,dae7df9135,4204be9d24,3706fb931c,a35e940579,0e4daf8750,0eb3656766,9348d2445a,c17e177cc0,5e84a73d35,95de4c4344,b79d45488c
timeout $((DL + 90)) python3 tools/mutate.py run --bundle . --ids $IDS \
  --checks 'tcbf16|tc_attn_gpu_test|attn_shake_gpu_test' \
  --jobs 12 --timeout 150 --sanitizer-timeout 200 --deadline $DL --grace 60 --prime-baselines \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st mutate $?
cd $D/w
sed -n '/Score per file/,/Survivors/p' mutate/mutation-report.md | grep "^|" | cut -c1-200
grep "^- \`kernels" mutate/mutation-report.md | cut -c1-220
sed -n '/Killed: by which/,/Where the time/p' mutate/mutation-report.md | grep "^| [0-9a-f]" | cut -c1-200
grep -A3 "^\*\*Undecided" mutate/mutation-report.md | cut -c1-200
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/mutate/mutation-report.md . 2>/dev/null; rm -rf w
