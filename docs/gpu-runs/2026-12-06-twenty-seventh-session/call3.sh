#!/bin/bash
# Twenty-seventh session, call 3: probe_door_wgmma's third and fourth forms (q loaded by both
# warpgroups in one batch; the denominators handed over through the P exchange's mbarriers, no named barrier;
# warpgroup 1 releases the exchange after its rescale; 2 stages, and 4 stages of 8 rows) under
# memcheck and racecheck,
# with the SASS around any racecheck hazard's addresses; then the test code of the twenty-fifth
# and twenty-sixth sessions that never ran (the whole tier did not fit the device time left).
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
timeout 60 var/probe_door_wgmma --rounds 3 > $D/w/probe-wgmma.md 2>&1; st probe_door_wgmma $?
for tool in memcheck racecheck; do
  timeout 60 $SAN --tool $tool --error-exitcode 3 var/probe_door_wgmma --check > $D/w/probe-wgmma-$tool.txt 2>&1; st "wgmma --check $tool" $?
done
OBJ=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null)
PCS=$(grep -o "+0x[0-9a-f]*" $D/w/probe-wgmma-racecheck.txt | sort -u | sed 's/+0x//')
for fn in _Z7wg_walkILi0ELi4EEvPKfS1_S1_PfS2_S2_iiifli _Z7wg_walkILi0ELi2EEvPKfS1_S1_PfS2_S2_iiifli; do
  timeout 20 $OBJ -sass -fun $fn var/probe_door_wgmma > $D/w/$fn.sass 2>&1
  for pc in $PCS; do
    p=$(printf '%04x' 0x$pc); echo "== $fn $pc"; grep -n -B6 -A2 "/\*$p\*/" $D/w/$fn.sass | head -24
  done
done > $D/w/hazard-sass.txt 2>&1; st sass $?
# the test code of the twenty-fifth and twenty-sixth sessions that never ran, alone (the whole
# tier did not fit the device time left): the exact-size allocations, plain and under memcheck,
# and the shake build's NaN-filled workspace
run_case() { # name binary filter [sanitizer]
  local n=$1 b=$2 f=$3 tool=${4:-}
  if [ $((SECONDS-T0)) -gt 100 ]; then st "case $n skipped (the call's time)" -; return; fi
  if [ -n "$tool" ]; then
    timeout 90 $SAN --tool $tool --error-exitcode 3 bin/$b --jobs 1 --filter "$f" > $D/w/case-$n.txt 2>&1
  else
    timeout 60 bin/$b --jobs 4 --filter "$f" > $D/w/case-$n.txt 2>&1
  fi
  st "case $n" $?
}
export MLA_GOLDEN_DIR=$(pwd)/golden
run_case exact_tc tc_attn_gpu_test 'tc_attn_gpu/san_exact_alloc__*'
run_case exact_kpool kpool_identities_gpu_test 'kpool_identities/san_score_exact_alloc'
run_case nan_ws attn_shake_gpu_test 'attn_shake/empty_partial_nan_ws__*'
run_case exact_tc_memcheck tc_attn_gpu_test 'tc_attn_gpu/san_exact_alloc__*' memcheck
run_case exact_kpool_memcheck kpool_identities_gpu_test 'kpool_identities/san_score_exact_alloc' memcheck
cd $D/w
cat probe-wgmma.md
for f in probe-wgmma-*.txt; do echo "$f: $(tail -n 1 $f)"; done
head -c 1500 hazard-sass.txt
for f in case-*.txt; do echo "$f: $(grep -E 'Synthesis|ERROR SUMMARY' $f | tail -n 2 | tr '\n' ' ')"; done
cat steps.txt
gzip -f *.sass
cd $D && tar -czf w.tar.gz w && cp w/steps.txt w/probe-wgmma.md . 2>/dev/null; rm -rf w
