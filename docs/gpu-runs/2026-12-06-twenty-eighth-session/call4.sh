#!/bin/bash
# Twenty-eighth session, call 4: where the wgmma arm's decode-32K time goes against the
# prototype's (call 3, H100: the arm 53.0 us through the door, the prototype 47.1). ecfc459's
# bench_dense and prototype; ncu on one decode-32K launch of the arm's walk kernel (attn_tc_wg)
# and of the prototype's (wg_walk<0,4>), each with its duration, throughput and warp states.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
mkdir -p out && tar -C out -xJf lib.tar.xz
xz -d var/*.xz; chmod +x var/*
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
timeout 40 var/bench_dense > $D/w/bench-dense.md 2> $D/w/bench-dense.err; st bench_dense $?
timeout 40 var/probe_door_wgmma --rounds 3 > $D/w/probe-wgmma.md 2>&1; st probe_door_wgmma $?
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
SEC="--section SpeedOfLight --section LaunchStats --section WarpStateStats --section SchedulerStats"
timeout 90 $NCU --kernel-name regex:attn_tc_wg --launch-count 1 $SEC var/bench_dense > $D/w/ncu-arm.txt 2>&1; st "ncu arm" $?
timeout 60 $NCU --kernel-name regex:wg_walk --launch-count 1 $SEC var/probe_door_wgmma --once > $D/w/ncu-proto.txt 2>&1; st "ncu prototype" $?
cd $D/w
grep -E "attn_absorbed" bench-dense.md | grep -E "wgmma|tf32 |bf16" | cut -c1-100
head -n 8 probe-wgmma.md
for f in ncu-arm.txt ncu-proto.txt; do echo "== $f"; grep -E "attn_tc_wg|wg_walk|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|No Eligible|Active Warps Per|Eligible Warps|Issued Warp|Grid Size|Registers|Stall" $f | head -24; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
