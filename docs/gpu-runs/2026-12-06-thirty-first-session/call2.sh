#!/bin/bash
# Thirty-first session, call 2 (written in the thirtieth session as next-call2.sh; run as written).
# as next-call1.sh (branch wgmma-softmax-derived; ids are offsets of its mla_attn_wg.cu, the same
# file as bf9c914's). Two sets, tc_attn_gpu_test and its sanitizer stages plus the golden suites' tcwgmma
# cases and attn_shake:
#  - the 16 mutants of the wgmma arm still without a verdict (6cf65ee ids in docs/mutation.md;
#    remapped by content, call4-remap-derived.txt);
#  - every mutant of the new wg_softmax_row and of the poison flags line (19, two shared).
# Call 4 of the thirtieth session lost its pass: with 16 workers the unmutated tc_attn_gpu_test
# outlasted its 150 s timeout, so every mutant was undecided. Hence 8 workers and 300 s here.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
[ -d relink ] || tar -xJf relink.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT > $D/w/steps.txt
IDS=b8a503a5a6,d067d6390c,4a389117c0,b8168f9709,290780ddcc,53e36edcbf,7ba96063c2,2d79b978e1,f6183ff644,7339d06bb2,c508d416fe,5b35232cf7,510a9cd3d1,14837f40d6,42997d7de9,642acb8cff
IDS=$IDS,5e34aad08a,06e2917037,d27ac5b91c,f31cb95ebd,8dd888eccc,6e967af1c5,32325bd369,c8fd8f7758,94bdc74d4e,67ac9b2ed7,1b6096742c,eea4109550,5684c41d4a,1786aec371,7b67c4dc6c,d4d0170711,57ed4c5d3b
timeout 570 python3 tools/mutate.py run --bundle . --file mla_attn_wg.cu --ids $IDS \
  --checks 'tcwgmma|tc_attn_gpu_test|attn_shake_gpu_test' \
  --jobs 8 --timeout 300 --sanitizer-timeout 300 --deadline 380 --grace 170 --prime-baselines \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st mutate $?
cd $D/w
sed -n '1,80p' mutate/mutation-report.md | cut -c1-260
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
