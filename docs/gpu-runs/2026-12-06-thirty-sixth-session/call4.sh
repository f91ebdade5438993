#!/bin/bash
# Thirty-sixth session, call 4: main's bundle at 95f7115 (the thirty-fifth session's; the device
# code of 8e2132d). (1) Where the wgmma door's walk spends a tile: ncu's full set on one walk at
# decode 32K, its SASS-level warp-stall samples (source page, CSV) and its details page.
# Why (calls 2 and 3): the walk takes 4.9 us a tile of 32 rows on the H100, the column pairs 3.2 us
# a tile with no P . V in warpgroup 0, the deeper ring with one bf16 buffer 6.0 us: the tile's
# chain inside the SM, not the DRAM (58.8% of its peak), looks like the bound. Expected (written
# before): the stall samples concentrate at the waits of the chain (the mbarrier waits of fullB /
# pready and wgmma.wait_group), not at the producer's empty-stage waits.
# (2) The bf16 door's 7 owed sanitizer-only mutants (the thirty-fifth session's next-call2.sh).
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
BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 150 ncu --set full --import-source no \
  --cache-control none --clock-control none --kernel-name regex:"attn_tc_wg" --launch-skip 4 \
  --launch-count 1 -o $D/w/walk bin/bench_dense > $D/w/ncu-full.log 2>&1; st "ncu full" $?
ncu --import $D/w/walk.ncu-rep --page details > $D/w/walk-details.txt 2>&1; st "details" $?
ncu --import $D/w/walk.ncu-rep --page source --csv --print-source sass > $D/w/walk-sass.csv 2>&1; st "source" $?
xz -T8 $D/w/walk-sass.csv; rm -f $D/w/walk.ncu-rep
IDS=e89fd74d1a,a9d6c6f1ab,a9491a0c57,be3d24a7c0,6316860612,052d7347da,075882ea9b
timeout 330 python3 tools/mutate.py run --bundle . --ids $IDS \
  --checks '^(racecheck|memcheck) (tc_attn_gpu_test|attn_shake_gpu_test)' \
  --jobs 7 --timeout 150 --sanitizer-timeout 240 --deadline 260 --grace 50 --prime-baselines \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st mutate $?
cd $D/w
grep -E "Duration|Warp Cycles Per Issued|Issue Slots Busy|Achieved Occupancy|No Eligible|DRAM Throughput|Memory Throughput" walk-details.txt | head -12
sed -n '/Score per file/,/Survivors/p' mutate/mutation-report.md | grep "^|" | cut -c1-200
grep "^- \`kernels" mutate/mutation-report.md | cut -c1-220
sed -n '/Killed: by which/,/Where the time/p' mutate/mutation-report.md | grep "^| [0-9a-f]" | cut -c1-200
cat steps.txt
cd $D && cp w/walk-details.txt . ; cp w/walk-sass.csv.xz . ; tar -czf w.tar.gz w; cp w/mutate/mutation-report.md . 2>/dev/null; rm -rf w
