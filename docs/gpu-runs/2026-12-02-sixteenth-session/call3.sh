#!/bin/bash
# sixteenth session, call 3: the fused arm's variants (ab/bench_dense_*: base0 = call 2's 128 x 256
# tile, pf = + the whole-row L2 prefetch (the tree's default), pfcs = pf + evict-first y, hint =
# base0 + L2::256B copies, pf64 = pf at 64 x 256 tiles, 2 blocks an SM), three interleaved rounds;
# the suite at pf with memcheck; ncu sections of the fused decompress kernel.
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
(timeout 200 ab/tc_prefill_gpu_test --verbose > $W/tc_prefill.txt 2>&1; echo "tc_prefill rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 ab/tc_prefill_gpu_test --filter='*/@(san_*|fused_shapes)' > $W/san-memcheck.txt 2>&1; echo "sanitize memcheck rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
wait
for r in 1 2 3; do
  for v in base0 pf pfcs hint pf64; do
    BENCH_ONLY="prefill TC door" MLA_BENCH_JSON=$W/pf-$v-$r.json timeout 90 ab/bench_dense_$v 50 > $W/pf-$v-$r.txt 2>&1
    echo "prefill $v $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
  done
done
BENCH_ONLY="decompress_v prefill TC door" timeout 150 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis -k regex:"bf16_gemm_f32x" --launch-skip 2 --launch-count 1 ab/bench_dense_pf 2 > $W/ncu-dv-pf.txt 2>&1
echo "ncu rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
cd $W
tail -1 tc_prefill.txt; grep -E "FAIL" tc_prefill.txt | head -10; tail -1 san-memcheck.txt
for v in base0 pf pfcs hint pf64; do echo "== $v"; for r in 1 2 3; do grep -E "(absorb_q|decompress_v) +prefill +TC door " pf-$v-$r.txt | awk '{printf "%s %s  ", $1, $5}'; echo; done; done
grep -E "Duration|Throughput|Stall|Busy|Hit Rate|Warp Cycles|Issued|Eligible" ncu-dv-pf.txt | head -60
cat steps.txt
cd $D && tar -czf /tmp/call3.tar.gz -C w . && rm -rf $D/w && mv /tmp/call3.tar.gz $D/
