#!/bin/bash
# Written in the twenty-seventh session, NOT RUN (its device time ran out in failed machine
# starts; docs/gpu-runs/2026-12-06-twenty-seventh-session.md): the next session's first call.
# 1. probe_door_wgmma's fourth form (the file as committed: q loaded by both warpgroups in one
#    batch, the denominators through the P exchange's mbarriers, the exchange released after the
#    rescale; 4 stages of 8 rows, timed beside 2 stages of 16 and checked for the same bytes),
#    then its untimed rows under memcheck, racecheck and synccheck, with the SASS around any
#    racecheck hazard's addresses (the second form had 25, call 2 of the twenty-seventh session).
#    The binary goes into bundle/var/ (bazel build //tools/bench:probe_door_wgmma; cp).
# 2. The GPU tier's tests and benchmarks (--parallel --bench), which runs the test code of the
#    twenty-fifth and twenty-sixth sessions that never ran (tc_attn_gpu/san_exact_alloc__*,
#    kpool_identities on exact allocations, attn_shake/empty_partial_nan_ws__*) and measures the
#    goals table. The sanitizer tier is next-call2.sh.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
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
timeout 120 var/probe_door_wgmma --rounds 3 > $D/w/probe-wgmma.md 2>&1; st probe_door_wgmma $?
for tool in memcheck racecheck synccheck; do
  timeout 100 $SAN --tool $tool --error-exitcode 3 var/probe_door_wgmma --check > $D/w/probe-wgmma-$tool.txt 2>&1; st "wgmma --check $tool" $?
done
OBJ=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null)
PCS=$(grep -o "+0x[0-9a-f]*" $D/w/probe-wgmma-racecheck.txt | sort -u | sed 's/+0x//')
for fn in _Z7wg_walkILi0ELi4EEvPKfS1_S1_PfS2_S2_iiifli _Z7wg_walkILi0ELi2EEvPKfS1_S1_PfS2_S2_iiifli; do
  timeout 30 $OBJ -sass -fun $fn var/probe_door_wgmma > $D/w/$fn.sass 2>&1
  for pc in $PCS; do
    p=$(printf '%04x' 0x$pc); echo "== $fn $pc"; grep -n -B6 -A2 "/\*$p\*/" $D/w/$fn.sass | head -24
  done
done > $D/w/hazard-sass.txt 2>&1; st sass $?
OUT=$R/bundle/out timeout 330 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
cp out/goals.md out/bench-*.json out/peer-torch.json $D/w/ 2>/dev/null
tar -czf $D/w/logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
cd $D/w
cat probe-wgmma.md
for f in probe-wgmma-*.txt; do echo "$f: $(tail -n 1 $f)"; done
head -c 1500 hazard-sass.txt
tail -n 14 tier.log
head -n 30 goals.md 2>/dev/null
cat steps.txt
gzip -f *.sass
# at most 8 files come back: everything in one archive, the short ones beside it
cd $D && tar -czf w.tar.gz w && cp w/steps.txt w/probe-wgmma.md w/goals.md . 2>/dev/null; rm -rf w
