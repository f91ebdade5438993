#!/bin/bash
# Twenty-seventh session, call 1: the two door prototypes, before anything else.
# 1. probe_door_wgmma (new this session; docs/performance.md, "Twenty-seventh session"): the
#    warp-specialised wgmma walk beside the tf32 and bf16 arms and the read floor, each row's
#    distance from the f32 launcher, run twice for identical bytes; then its untimed rows under
#    memcheck and racecheck. It ships as bundle/var/probe_door_wgmma (a delta on the bundle).
# 2. probe_door_pingpong (the twenty-sixth session's prototype, never run) and its untimed rows
#    under racecheck and synccheck, as next-call1.sh planned.
# A hang (a barrier protocol error) is cut by each step's timeout.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
SAN=/usr/local/cuda/bin/compute-sanitizer
timeout 150 var/probe_door_wgmma --rounds 3 > $D/w/probe-wgmma.md 2>&1; st probe_door_wgmma $?
for tool in memcheck racecheck; do
  timeout 100 $SAN --tool $tool --error-exitcode 3 var/probe_door_wgmma --check > $D/w/probe-wgmma-$tool.txt 2>&1; st "wgmma --check $tool" $?
done
timeout 120 bin/probe_door_pingpong --rounds 3 > $D/w/probe-pingpong.md 2>&1; st probe_door_pingpong $?
for tool in racecheck synccheck; do
  timeout 90 $SAN --tool $tool --error-exitcode 3 bin/probe_door_pingpong --check > $D/w/probe-pingpong-$tool.txt 2>&1; st "pingpong --check $tool" $?
done
cd $D/w
cat probe-wgmma.md; echo; cat probe-pingpong.md
tail -4 probe-wgmma-memcheck.txt probe-wgmma-racecheck.txt probe-pingpong-racecheck.txt probe-pingpong-synccheck.txt | cut -c1-300
cat steps.txt
cd $D && tar -czf w.tar.gz w && cp w/steps.txt w/probe-wgmma.md w/probe-pingpong.md . 2>/dev/null; rm -rf w
