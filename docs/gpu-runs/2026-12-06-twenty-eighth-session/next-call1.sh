#!/bin/bash
# Written in the twenty-eighth session, NOT RUN (its device time ran out): the next session's
# first call. Prepare: `tools/harness bundle bundle` on main; rm -rf bundle/golden (the tree has
# it); git rev-parse --short HEAD > bundle/COMMIT; then on branch wgmma-shared-window
# `bazel build //tools/bench:bench_dense` and copy it to bundle/var/bench_dense_lds (xz it);
# back on main. The working tree plus the carried bundle must stay under 64 MiB (drop
# relink.tar.xz if it does not).
#  1. the wgmma door arm on main (generic shared accesses) against the branch's (LDS / STS), the
#     two bench_dense alternately, 3 rounds each;
#  2. ncu on one decode-32K launch of the arm's walk kernel (attn_tc_wg) in each, and of the
#     prototype's (wg_walk<0,4>): duration, throughput, warp states (where the 5.9 us the arm
#     spends beyond the prototype at decode 32K goes; twenty-eighth session, call 3);
#  3. probe_door_wgmma with its cluster form (never run), and its untimed rows under memcheck
#     and racecheck;
#  4. the sanitizer tier (next-call2.sh of the twenty-seventh session, owed since the
#     twenty-sixth) if the time is left: run it as its own call.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
xz -d var/*.xz 2>/dev/null; chmod +x var/* 2>/dev/null
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
for r in 1 2 3; do
  timeout 40 bin/bench_dense > $D/w/bench-main-$r.md 2>/dev/null; st "bench main $r" $?
  timeout 40 var/bench_dense_lds > $D/w/bench-lds-$r.md 2>/dev/null; st "bench lds $r" $?
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
SEC="--section SpeedOfLight --section LaunchStats --section WarpStateStats --section SchedulerStats"
timeout 90 $NCU --kernel-name regex:attn_tc_wg --launch-count 1 $SEC bin/bench_dense > $D/w/ncu-main.txt 2>&1; st "ncu main" $?
timeout 90 $NCU --kernel-name regex:attn_tc_wg --launch-count 1 $SEC var/bench_dense_lds > $D/w/ncu-lds.txt 2>&1; st "ncu lds" $?
timeout 60 $NCU --kernel-name regex:wg_walk --launch-count 1 $SEC bin/probe_door_wgmma --once > $D/w/ncu-proto.txt 2>&1; st "ncu prototype" $?
# the prototype with its cluster form (never run before): its rows, then its untimed rows under
# memcheck and racecheck (distributed shared memory, cluster barriers)
timeout 60 bin/probe_door_wgmma --rounds 3 > $D/w/probe-wgmma.md 2>&1; st probe_door_wgmma $?
for tool in memcheck racecheck; do
  timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool $tool --error-exitcode 3 bin/probe_door_wgmma --check > $D/w/probe-$tool.txt 2>&1; st "probe --check $tool" $?
done
cd $D/w
for f in bench-*.md; do echo "$f: $(grep -E 'attn_absorbed \| decode \| TC door: wgmma' $f | cut -d'|' -f5)"; done
for f in ncu-*.txt; do echo "== $f"; grep -E "Duration|DRAM Throughput|No Eligible|Eligible Warps|Issued Warp" $f | head -8; done
cat probe-wgmma.md; for f in probe-*check*.txt; do echo "$f: $(tail -n 1 $f)"; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
