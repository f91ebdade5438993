#!/bin/bash
# sixteenth session, call 7: ncu durations of the TC prefill door's kernels at glm5 prefill (the
# 8-wide conversion and cuBLASLt's GEMM, absorb_q and decompress_v), clocks untouched.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w; W=$D/w
cat COMMIT > $W/steps.txt
for k in absorb_q decompress_v; do
  BENCH_ONLY="$k prefill TC door" timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum -k regex:"convert|gemm" --launch-count 10 bin/bench_dense 3 > $W/ncu-$k.txt 2>&1
  echo "ncu $k rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
done
cd $W
for f in ncu-*.txt; do echo "== $f"; awk '/^  [a-zA-Z_]/{k=substr($1,1,60)} /gpu__time|dram__bytes/{print k, $1, $(NF-1), $NF}' $f; done
cat steps.txt
cd $D && tar -czf /tmp/call7.tar.gz -C w . && rm -rf $D/w && mv /tmp/call7.tar.gz $D/
