#!/bin/bash
# fifteenth session, call 1: exhaustive TF32 conversion check; SASS of the door; A/B of the door
# variants (bench_dense's tf32 door rows, two interleaved rounds); the door's suites and sanitizers
# at the working tree; ncu kernel durations (door + combine). ab/ held bench_dense built at 4704b69
# (base), at round 1 without the PDL combine (kern), and call1-variants-patch.py's variants on top
# of round 1 (alpha, copy, copyb, alpha_copy); bin/bench_dense was round 1 whole (all).
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
[ -d ab ] || tar -xJf ab.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
cat COMMIT > $D/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/steps.txt
cp bin/bench_dense ab/bench_dense_all
timeout 60 ab/tf32exh > $D/tf32exh.txt 2>&1; echo "tf32exh rc=$? $((SECONDS-T0)) s" >> $D/steps.txt
cuobjdump -sass ab/tf32probe.cubin > $D/sass-tf32probe.txt 2>&1
for c in base pdl; do cuobjdump -sass ab/$c.cubin > $D/sass-$c.txt 2>&1; done
echo "sass $((SECONDS-T0)) s" >> $D/steps.txt
for r in 1 2; do
  for v in base kern all alpha copy copyb alpha_copy; do
    BENCH_ONLY="TC door: tf32" MLA_BENCH_JSON=$D/ab-$v-$r.json timeout 60 ab/bench_dense_$v 50 > $D/ab-$v-$r.txt 2>&1
    echo "ab $v $r rc=$? $((SECONDS-T0)) s" >> $D/steps.txt
  done
done
for v in base all; do for w in "decode" "decode t_kv 8192"; do
  tag=$v-$(echo $w | tr ' ' '_')
  BENCH_ONLY="$w TC door: tf32" timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:"attn_tc_f32|attn_combine" --launch-skip 4 --launch-count 6 ab/bench_dense_$v 20 > $D/ncu-dur-$tag.txt 2>&1
  echo "ncu $tag rc=$? $((SECONDS-T0)) s" >> $D/steps.txt
done; done
for t in tc_attn_gpu_test attn_shake_gpu_test tf32_mma_model_gpu_test dense_gpu_goldens_test kpool_gpu_goldens_test; do
  (timeout 200 bin/$t > $D/$t.txt 2>&1; echo "$t rc=$? $((SECONDS-T0)) s" >> $D/steps.txt) &
done; wait
for tool in memcheck racecheck; do
  (timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 bin/tc_attn_gpu_test > $D/san-$tool.txt 2>&1; echo "sanitize $tool tc_attn rc=$? $((SECONDS-T0)) s" >> $D/steps.txt) &
done; wait
cd $D
cat tf32exh.txt
for f in ab-*-1.txt ab-*-2.txt; do echo "== $f"; grep -E "TC door: tf32" $f | grep -E " us " ; done 2>/dev/null | head -90
cat steps.txt
tar -czf /tmp/call1.tar.gz * && rm -rf $D/* && mv /tmp/call1.tar.gz $D/
