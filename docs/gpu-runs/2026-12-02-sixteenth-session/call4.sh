#!/bin/bash
# sixteenth session, call 4: the TC prefill door's bf16 conversion 8 elements a thread
# (ab/bench_dense_v8u2: the tree; v8u4: 4 groups in flight, 1056 blocks; v8wide: 8448 blocks;
# old: the scalar kernel of 45f6e58), three interleaved rounds; tc_prefill_gpu_test at the tree;
# ncu durations of the door's kernels (conversion, cuBLASLt GEMM) for old and v8u2.
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
(timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 ab/tc_prefill_gpu_test --filter='*/@(san_*|bf16_prep_matches_host)' > $W/san-memcheck.txt 2>&1; echo "sanitize memcheck rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
wait
for r in 1 2 3; do
  for v in old v8u2 v8u4 v8wide; do
    BENCH_ONLY="prefill TC door" MLA_BENCH_JSON=$W/pf-$v-$r.json timeout 90 ab/bench_dense_$v 50 > $W/pf-$v-$r.txt 2>&1
    echo "prefill $v $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
  done
done
for v in old v8u2; do
  for k in absorb_q decompress_v; do
    BENCH_ONLY="$k prefill TC door" timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --launch-skip 0 --launch-count 12 ab/bench_dense_$v 3 > $W/ncu-$v-$k.txt 2>&1
    echo "ncu $v $k rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
  done
done
cd $W
tail -1 tc_prefill.txt; grep -E "FAIL" tc_prefill.txt | head -10; tail -1 san-memcheck.txt
for v in old v8u2 v8u4 v8wide; do echo "== $v"; for r in 1 2 3; do grep -E "(absorb_q|decompress_v) +prefill +TC door " pf-$v-$r.txt | awk '{printf "%s %s  ", $1, $5}'; echo; done; done
for f in ncu-*.txt; do echo "== $f"; awk '/^  [a-zA-Z_]/{k=$1} /gpu__time|dram__bytes/{print k, $1, $(NF-1), $NF}' $f | tail -24; done
cat steps.txt
cd $D && tar -czf /tmp/call4.tar.gz -C w . && rm -rf $D/w && mv /tmp/call4.tar.gz $D/
