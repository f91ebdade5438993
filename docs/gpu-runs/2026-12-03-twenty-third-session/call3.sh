#!/bin/bash
# twenty-third session, call 3: the bf16 door in 16 warps (two groups of 8, each the tf32 arm's
# layout over 32 heads, sharing the 64-head cache tile), against the 8-warp form of call 2:
# probe_door_arms for w16 (the nt loop unrolled), w16u1 (not unrolled) and w8; then ncu on w16.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
mkdir -p out && tar -C out -xJf lib.tar.xz
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; }
for v in w16 w16u1 w8; do
  echo "== $v" >> $D/w/probe.md
  timeout 120 var/probe_door_arms_$v --rounds 3 >> $D/w/probe.md 2>&1; st probe_$v $?
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
timeout 240 $NCU --set full --kernel-name regex:"attn_tc_bf16|attn_combine" --launch-count 2 -o $D/w/door16 -f var/probe_door_arms_w16 --once > $D/w/ncu.log 2>&1; st ncu $?
timeout 60 $NCU -i $D/w/door16.ncu-rep --page details > $D/w/details.txt 2>&1; st details $?
timeout 120 $NCU -i $D/w/door16.ncu-rep --page source --csv --print-source sass --kernel-name regex:attn_tc_bf16 > $D/w/sass_w16.csv 2>&1; st sass $?
cd $D/w
cat probe.md
grep -E "attn_|Duration|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Registers|Local|Achieved Occupancy|DRAM Throughput" details.txt | head -40
cat steps.txt
gzip -f sass_w16.csv details.txt
cd $D && tar -czf call3.tar.gz -C w . && rm -rf w
