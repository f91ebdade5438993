#!/bin/bash
# Thirty-third session, call 2 (bundle of main at c15591e): the wgmma arm's empty
# partial, every mutant of it (the zero loop's bound, stride and guard: lines 167, 169; the (m, l,
# flags) guard: line 172), and the P fragment loop at line 316 (owed since the thirtieth
# session as 639ced6cb9), under the arm's tc_attn cases, attn_shake (the late empty partial, the
# dominant row) and attn_shake's memcheck (the exact workspace). Predicted: every "one head long"
# and "every head" mutant killed (value, through the late empty partial, or memcheck); the "- 1"
# bounds killed by the NaN-filled workspace (a partial left unwritten).
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
IDS=e9a3211044,213fcfd4a6,3e5ee81b9b,a7a9ab166e,a26b8514e3,0ffef8802d,49f0f198e4,42f6be2319
IDS=$IDS,ecc2ed941c,b91d7bbffe,6268a0edb0,28f9ad3354,b6bdd9a76b,2c7dfb5160,91bf6223b3,22c1b682cf
IDS=$IDS,e537d37304
timeout 420 python3 tools/mutate.py run --bundle . --ids $IDS \
  --checks '^(tc_attn_gpu_test --filter=\*/\*wgmma\*|(memcheck )?attn_shake_gpu_test)$' \
  --jobs 9 --timeout 200 --sanitizer-timeout 200 --deadline 330 --grace 60 --prime-baselines \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st mutate $?
cd $D/w
sed -n '/Score per file/,/The next pass/p' mutate/mutation-report.md | cut -c1-200
sed -n '/Killed: by which/,/Where the time/p' mutate/mutation-report.md | grep "^| [0-9a-f]" | cut -c1-200
grep -A3 "^\*\*Undecided" mutate/mutation-report.md | cut -c1-200
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
