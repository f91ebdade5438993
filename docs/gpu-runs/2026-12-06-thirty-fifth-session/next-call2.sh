#!/bin/bash
# For the next session, call 2 (after next-call1.sh, on the same bundle of main at 95f7115 or later;
# the ids are offsets into main's mla_attn.cu as of b7e6a45: rebuild them by content if it changed,
# docs/mutation.md). The bf16 door's 7 owed mutants that passed every value check in the
# thirty-fourth session's call 4 and were cut in racecheck: only the sanitizer stages now (a kill is
# a kill; a survivor then survived the sanitizers only, after the value checks of that call).
# Predicted: the reads past q (052d7347da `c4 <= wp4`, 075882ea9b `c4 < wp4 + 1`) killed by
# memcheck; the rest unknown. (The eighth, the rounding mutant 847d1318d9, was killed by
# slot_symmetry__bf16 in the thirty-fifth session's call B.)
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
IDS=e89fd74d1a,a9d6c6f1ab,a9491a0c57,be3d24a7c0,6316860612,052d7347da,075882ea9b
timeout 400 python3 tools/mutate.py run --bundle . --ids $IDS \
  --checks '^(racecheck|memcheck) (tc_attn_gpu_test|attn_shake_gpu_test)' \
  --jobs 7 --timeout 150 --sanitizer-timeout 240 --deadline 300 --grace 60 --prime-baselines \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st mutate $?
cd $D/w
sed -n '/Score per file/,/Survivors/p' mutate/mutation-report.md | grep "^|" | cut -c1-200
grep "^- \`kernels" mutate/mutation-report.md | cut -c1-220
sed -n '/Killed: by which/,/Where the time/p' mutate/mutation-report.md | grep "^| [0-9a-f]" | cut -c1-200
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/mutate/mutation-report.md . 2>/dev/null; rm -rf w
