#!/bin/bash
# Written in the thirty-first session after its device time, NOT RUN: the next session's first
# call, on a bundle of main (tools/harness bundle bundle; rm -rf bundle/golden;
# git rev-parse --short HEAD > bundle/COMMIT).
#  1. the symmetry cases at 32K and gathered t_q 8 (new, not yet run; 10 cases of 25), every arm:
#     the 15 at 4096 / verify / gathered t_q 2 passed in call 3; a failure at 32K on an arm other
#     than wgmma would say that arm's arithmetic is not column- or head-symmetric there; and the
#     three twin_exact__wgmma_* cases (new, not yet run: the arm's bytes against its scalar twin,
#     tests/lib/wg_twin.h). A twin case failing unmutated means the twin misstates the arm (its
#     first differing element says where): fix the twin, not the arm, before the mutation step
#     counts its kills (the pass's unmutated baseline would show it as "check fails unmutated");
#  2. the mutation pass of the 13 wgmma mutants still owed (docs/mutation.md), under the new
#     FILE_BINARY_FILTERS (tc_attn_gpu_test's *wgmma* cases only), with memcheck (four of them are
#     out-of-bounds accesses only an exact allocation shows) and without racecheck (none is a SYNC
#     mutant). Predicted: b8168f9709 killed by symmetry__wgmma_decode_32k and the twin cases;
#     the five rounding mutants of l killed by the twin cases; 5b35232cf7, 53e36edcbf,
#     7ba96063c2, 42997d7de9 killed by memcheck of san_exact_alloc*__wgmma; 06e2917037 /
#     5e34aad08a (undefined behaviour) and 290780ddcc (a race the block order hides) survive.
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
timeout 120 bin/tc_attn_gpu_test --jobs 8 --filter '*/@(symmetry*|twin_exact*)' --verbose > $D/w/symmetry.log 2>&1; st "symmetry (25), twin (3)" $?
# 3 (before the pass, short): what limits the combine (docs/performance.md, thirty-first session:
#   27% of the L2's throughput, and more loads in flight did not help): ncu's memory-workload,
#   warp-state, scheduler and occupancy sections on the decode-32K door row's combine, caches and
#   clocks as the walk left them
BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 60 ncu --cache-control none --clock-control none \
  --kernel-name regex:"attn_combine" --launch-skip 2 --launch-count 1 --section SpeedOfLight \
  --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section Occupancy --section LaunchStats bin/bench_dense > $D/w/ncu-combine.txt 2>&1; st "ncu combine" $?
IDS=b8168f9709,5b35232cf7,53e36edcbf,7ba96063c2,42997d7de9,5684c41d4a,4a389117c0,d067d6390c
IDS=$IDS,eea4109550,b8a503a5a6,06e2917037,5e34aad08a,290780ddcc
timeout 420 python3 tools/mutate.py run --bundle . --file mla_attn_wg.cu --ids $IDS \
  --checks '^(?!racecheck)' \
  --jobs 13 --timeout 240 --sanitizer-timeout 240 --deadline 240 --grace 150 --prime-baselines \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st mutate $?
cd $D/w
grep -E "Synthesis|FAIL|differ" symmetry.log | head -20
grep -E "Duration|Throughput|Hit Rate|Stall|Warp Cycles|Eligible|Achieved|Registers|Block Limit" ncu-combine.txt | head -30
sed -n '1,60p' mutate/mutation-report.md | cut -c1-300
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
