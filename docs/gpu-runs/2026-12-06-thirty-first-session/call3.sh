#!/bin/bash
# Thirty-first session, call 3. Bundle: main at a244254 (the derived softmax merged; the new
# tc_attn_gpu/symmetry__<arm>_* tests). Two steps:
#  1. the symmetry tests on the unmutated bundle (15 cases: 5 arms x decode, verify, gathered);
#  2. the mutation pass over call 2's 28 mutants without a verdict that compile to other machine
#     code (mutate.py same-code: the other two are the same code), value checks and memcheck only:
#     none of them is a SYNC mutant, and call 2 spent most of its time in racecheck (every
#     undecided mutant was cut there, after passing every other check). Ordered: the rescale's RZ
#     (the symmetry test's target) and the other survivors of call 2 first.
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
timeout 90 bin/tc_attn_gpu_test --jobs 8 --filter '*/symmetry*' --verbose > $D/w/symmetry.log 2>&1; st "symmetry" $?
IDS=b8168f9709,1786aec371,d4d0170711,c508d416fe,06e2917037,5e34aad08a,290780ddcc
IDS=$IDS,d067d6390c,eea4109550,4a389117c0,5684c41d4a,b8a503a5a6,7b67c4dc6c,57ed4c5d3b,6e967af1c5
IDS=$IDS,f31cb95ebd,c8fd8f7758,d27ac5b91c,1b6096742c,f6183ff644,53e36edcbf,7ba96063c2,2d79b978e1
IDS=$IDS,42997d7de9,7339d06bb2,510a9cd3d1,5b35232cf7,642acb8cff
timeout 500 python3 tools/mutate.py run --bundle . --file mla_attn_wg.cu --ids $IDS \
  --checks '^(?!racecheck)' \
  --jobs 14 --timeout 300 --sanitizer-timeout 300 --deadline 330 --grace 140 --prime-baselines \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st mutate $?
cd $D/w
grep -E "Synthesis|FAIL|differ|Assertion" symmetry.log | head -20
sed -n '1,60p' mutate/mutation-report.md | cut -c1-300
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
