#!/bin/bash
# Twenty-seventh session, call 2: probe_door_wgmma's second form (tile k + 1 converted under tile
# k's logits, q loaded by warpgroup 0 beside the first tiles), with the time's split (the walk,
# without its stores, without any wgmma) and a one-tile row; its untimed rows under memcheck and
# racecheck; ncu on its decode-32K walk (clocks untouched).
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
SAN=/usr/local/cuda/bin/compute-sanitizer
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
timeout 150 var/probe_door_wgmma --rounds 3 > $D/w/probe-wgmma.md 2>&1; st probe_door_wgmma $?
for tool in memcheck racecheck synccheck; do
  timeout 100 $SAN --tool $tool --error-exitcode 3 var/probe_door_wgmma --check > $D/w/probe-wgmma-$tool.txt 2>&1; st "wgmma --check $tool" $?
done
timeout 120 $NCU --clock-control none --kernel-name regex:wg_walk --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy -f -o $D/w/wg var/probe_door_wgmma --once > $D/w/ncu.log 2>&1; st ncu $?
timeout 30 $NCU -i $D/w/wg.ncu-rep --page details > $D/w/wg-details.txt 2>&1; st details $?
cd $D/w
cat probe-wgmma.md
for f in probe-wgmma-*.txt; do echo "$f: $(tail -n 1 $f)"; done
grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Stall|L2 Hit" wg-details.txt | head -30
cat steps.txt
cd $D && tar -czf w.tar.gz w && cp w/steps.txt w/probe-wgmma.md w/wg-details.txt . 2>/dev/null; rm -rf w
