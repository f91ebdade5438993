#!/bin/bash
# fifteenth session, call 4: P . V as O^T = V^T P^T (the NNT 8 arms), a variant of 2376fa3 built
# apart (not committed): bench_dense's tf32 door rows against 2376fa3's, twice, interleaved; its
# tc_attn / attn_shake suites and memcheck / racecheck of tc_attn; its SASS
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
rm -rf ab; tar -xJf ab.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w; cat COMMIT > $D/w/steps.txt
cp bin/bench_dense ab/bench_dense_base
cuobjdump -sass ab/ot.cubin > $D/w/sass-ot.txt 2>&1
for r in 1 2; do for v in base ot; do
  BENCH_ONLY="TC door: tf32" MLA_BENCH_JSON=$D/w/ab-$v-$r.json timeout 60 ab/bench_dense_$v 50 > $D/w/ab-$v-$r.txt 2>&1
  echo "ab $v $r rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
done; done
for t in tc_attn_gpu_test attn_shake_gpu_test; do
  (timeout 100 ab/${t}_ot > $D/w/$t.txt 2>&1; echo "$t rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt) &
done; wait
for tool in memcheck racecheck; do
  (timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 ab/tc_attn_gpu_test_ot > $D/w/san-$tool.txt 2>&1; echo "sanitize $tool rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt) &
done; wait
cd $D/w
for f in ab-*-*.txt; do echo "== $f"; grep -E "TC door: tf32" $f | grep " us "; done
for t in tc_attn_gpu_test attn_shake_gpu_test; do tail -1 $t.txt; done
tail -1 san-*.txt
cat steps.txt
cd $D && tar -czf call4.tar.gz -C w . && rm -rf w
