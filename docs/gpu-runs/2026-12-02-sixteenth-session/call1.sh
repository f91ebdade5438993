#!/bin/bash
# sixteenth session, call 1: the TC prefill door's fused GEMM arm (tc_prefill_gpu_test whole, its
# sanitizer set, bench rows of both arms twice, ncu of the fused kernel and the cuBLASLt pair) and
# the absorb_q decode load-hint variants (ab/bench_dense_*, two interleaved rounds); SASS of both.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
[ -d ab ] || tar -xJf ab.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w; W=$D/w
cat COMMIT > $W/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $W/steps.txt
timeout 200 bin/tc_prefill_gpu_test --verbose > $W/tc_prefill.txt 2>&1; echo "tc_prefill rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
for tool in memcheck racecheck initcheck; do
  (timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 bin/tc_prefill_gpu_test --filter='*/@(san_*|fused_shapes)' > $W/san-$tool.txt 2>&1; echo "sanitize $tool rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
done; wait
for r in 1 2; do
  BENCH_ONLY="prefill TC door" MLA_BENCH_JSON=$W/pf-$r.json timeout 90 bin/bench_dense 50 > $W/pf-$r.txt 2>&1
  echo "prefill bench $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
  for v in base l2_256 l2_128 na; do
    b=ab/bench_dense_$v; [ $v = base ] && b=bin/bench_dense
    BENCH_ONLY="absorb_q decode" MLA_BENCH_JSON=$W/ab-$v-$r.json timeout 60 $b 50 > $W/ab-$v-$r.txt 2>&1
    echo "ab $v $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
  done
done
BENCH_ONLY="prefill TC door" timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active --launch-skip 0 --launch-count 40 bin/bench_dense 3 > $W/ncu-prefill.txt 2>&1
echo "ncu rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
for f in _Z14bf16_gemm_f32xPKtPKfPfiiillll _Z16absorb_q_reg_f32PKfS0_Pfi; do
  cuobjdump -sass -fun $f bin/bench_dense > $W/sass-$f.txt 2>&1
done
cuobjdump -sass -fun _Z16absorb_q_reg_f32PKfS0_Pfi ab/bench_dense_l2_256 > $W/sass-absorb-l2_256.txt 2>&1
echo "sass $((SECONDS-T0)) s" >> $W/steps.txt
cd $W
tail -3 tc_prefill.txt; grep -E "FAIL|fail" tc_prefill.txt | head -20
for t in memcheck racecheck initcheck; do echo "== $t"; tail -2 san-$t.txt; done
for f in pf-1.txt pf-2.txt; do echo "== $f"; grep -E " us |receipt" $f | head -12; done
for f in ab-*-1.txt ab-*-2.txt; do echo "== $f"; grep -E "absorb_q +decode" $f | grep " us " | head -3; done
grep -E "bf16_gemm|gpu__time|dram__bytes|pct" ncu-prefill.txt | head -60
cat steps.txt
cd $D && tar -czf /tmp/call1.tar.gz -C w . && rm -rf $D/w && mv /tmp/call1.tar.gz $D/
