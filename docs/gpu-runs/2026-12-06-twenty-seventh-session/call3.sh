#!/bin/bash
# Twenty-seventh session, call 3: probe_door_wgmma's third and fourth forms (q loaded by both
# warpgroups in one batch; the denominators handed over through the P exchange's mbarriers, no named barrier;
# warpgroup 1 releases the exchange after its rescale; 2 stages, and 4 stages of 8 rows) under
# memcheck, racecheck and synccheck,
# with the SASS around any racecheck hazard's addresses; then the GPU tier's tests and benchmarks
# (--parallel --bench: the test code of the twenty-fifth and twenty-sixth sessions, never run).
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
timeout 150 var/probe_door_wgmma --rounds 3 > $D/w/probe-wgmma.md 2>&1; st probe_door_wgmma $?
for tool in memcheck racecheck synccheck; do
  timeout 100 $SAN --tool $tool --error-exitcode 3 var/probe_door_wgmma --check > $D/w/probe-wgmma-$tool.txt 2>&1; st "wgmma --check $tool" $?
done
OBJ=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null)
PCS=$(grep -o "+0x[0-9a-f]*" $D/w/probe-wgmma-racecheck.txt | sort -u | sed 's/+0x//')
for fn in _Z7wg_walkILi0ELi4EEvPKfS1_S1_PfS2_S2_iiifli _Z7wg_walkILi0ELi2EEvPKfS1_S1_PfS2_S2_iiifli; do
  timeout 60 $OBJ -sass -fun $fn var/probe_door_wgmma > $D/w/$fn.sass 2>&1
  for pc in $PCS; do
    p=$(printf '%04x' 0x$pc); echo "== $fn $pc"; grep -n -B6 -A2 "/\*$p\*/" $D/w/$fn.sass | head -24
  done
done > $D/w/hazard-sass.txt 2>&1; st sass $?
OUT=$R/bundle/out timeout 300 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
tar -czf $D/w/logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
cd $D/w
cat probe-wgmma.md
for f in probe-wgmma-*.txt; do echo "$f: $(tail -n 1 $f)"; done
head -c 1500 hazard-sass.txt
tail -n 14 tier.log
head -n 30 goals.md 2>/dev/null
cat steps.txt
gzip -f *.sass
cd $D && tar -czf w.tar.gz w && cp w/steps.txt w/probe-wgmma.md w/goals.md w/tier.log . 2>/dev/null; rm -rf w
