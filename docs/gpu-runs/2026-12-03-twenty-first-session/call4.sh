#!/bin/bash
# twenty-first session, call 4: 8d9ae11 (the rounding tests' wrappers folded into GEOM_TEST, the
# halves fill into io_halves): tc_attn_gpu_test of the product door and of the three truncating
# doors again (each must fail exactly the tests that see its conversion), with the logged margins
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
rm -rf ab; tar -xJf ab.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
cat COMMIT > $D/steps.txt
for v in base ctrunc qtrunc ptrunc; do
  (timeout 200 ab/tc_attn_gpu_test_$v --jobs 2 --verbose > $D/tc_attn-$v.txt 2>&1; echo "tc_attn $v rc=$? $((SECONDS-T0)) s" >> $D/steps.txt) &
done
wait
for v in base ctrunc qtrunc ptrunc; do f=$D/tc_attn-$v.txt; echo "$v: $(grep -E 'Synthesis' $f)"; grep -E "^\[FAIL\]" $f | grep -oE "::[A-Za-z0-9_]+" | tr '\n' ' '; echo; done
grep -E "^\[----\].*rounding__" $D/tc_attn-base.txt
cat $D/steps.txt
