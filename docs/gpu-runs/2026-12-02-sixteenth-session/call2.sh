#!/bin/bash
# sixteenth session, call 2: the fused arm at 128 x 256 tiles (ab/bench_dense_base: the tree at
# the bundle's COMMIT + the tile change; _gf5: 5 stages) against the cuBLASLt arm, its tests and
# memcheck; absorb_q decode variants (na: L1::no_allocate loads, qf: q_nope loaded ahead of the
# weights, qfna: both), three interleaved rounds; ncu of the prefill door kernels.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
rm -rf ab; tar -xJf ab.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w; W=$D/w
cat COMMIT > $W/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $W/steps.txt
timeout 200 ab/tc_prefill_gpu_test --verbose > $W/tc_prefill.txt 2>&1; echo "tc_prefill rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
for tool in memcheck racecheck; do
  (timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 ab/tc_prefill_gpu_test --filter='*/@(san_*|fused_shapes)' > $W/san-$tool.txt 2>&1; echo "sanitize $tool rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
done; wait
for r in 1 2 3; do
  for v in base gf5; do
    BENCH_ONLY="prefill TC door" MLA_BENCH_JSON=$W/pf-$v-$r.json timeout 90 ab/bench_dense_$v 50 > $W/pf-$v-$r.txt 2>&1
    echo "prefill $v $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
  done
  for v in base na qf qfna; do
    BENCH_ONLY="absorb_q decode" MLA_BENCH_JSON=$W/ab-$v-$r.json timeout 60 ab/bench_dense_$v 50 > $W/ab-$v-$r.txt 2>&1
    echo "ab $v $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
  done
done
BENCH_ONLY="prefill TC door" timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct -k regex:"gemm|convert|xmma|sm90" --launch-count 16 ab/bench_dense_base 2 > $W/ncu-prefill.txt 2>&1
echo "ncu rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
cuobjdump -sass -fun _Z14bf16_gemm_f32xPKtPKfPfiiillll ab/bench_dense_base > $W/sass-gemm.txt 2>&1
cuobjdump -sass -fun _Z16absorb_q_reg_f32PKfS0_Pfi ab/bench_dense_qf > $W/sass-absorb-qf.txt 2>&1
cd $W
tail -2 tc_prefill.txt; grep -E "FAIL" tc_prefill.txt | head -10
for t in memcheck racecheck; do echo "== $t"; tail -1 san-$t.txt; done
for f in pf-*.txt; do echo "== $f"; grep -E "(absorb_q|decompress_v) +prefill" $f | grep " us "; done
for f in ab-*.txt; do echo "== $f"; grep -E "absorb_q +decode" $f | grep " us " | head -2; done
grep -E "^  [a-zA-Z_].*\(|gpu__time|dram__bytes|lts__t_bytes|pct" ncu-prefill.txt | head -120
cat steps.txt
cd $D && tar -czf /tmp/call2.tar.gz -C w . && rm -rf $D/w && mv /tmp/call2.tar.gz $D/
