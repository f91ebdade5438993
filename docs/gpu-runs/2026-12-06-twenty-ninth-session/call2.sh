#!/bin/bash
# Twenty-ninth session, call 2: the wgmma door arm in clusters of 2 on the bf16 arm's chunks, with
# the shared base aligned by pointer arithmetic (COMMIT). var/bench_dense_prev: 6af2ec2 (plain).
#  1. tc_attn_gpu_test's wgmma cases, attn_shake_gpu_test whole;
#  2. memcheck and racecheck on cluster and plain cases and both shake wgmma cases;
#  3. bench_dense's wgmma rows, prev and COMMIT alternately, 2 rounds; ncu of COMMIT's decode 32K.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
xz -d var/*.xz 2>/dev/null; chmod +x var/* 2>/dev/null
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
SAN=/usr/local/cuda/bin/compute-sanitizer
timeout 240 bin/tc_attn_gpu_test --jobs 12 --filter 'tc_attn_gpu/*__wgmma*' > $D/w/tc-attn.log 2>&1; st "tc_attn wgmma" $?
timeout 120 bin/attn_shake_gpu_test --jobs 6 > $D/w/attn-shake.log 2>&1; st attn_shake $?
F='tc_attn_gpu/@(cluster_partial_heads|cluster_inf_rope|plain_inf_rope|partial_heads)__wgmma'
for tool in memcheck racecheck; do
  timeout 150 $SAN --tool $tool --error-exitcode 3 bin/tc_attn_gpu_test --jobs 1 --filter "$F" > $D/w/san-$tool.log 2>&1; st "tc_attn wgmma $tool" $?
  timeout 100 $SAN --tool $tool --error-exitcode 3 bin/attn_shake_gpu_test --jobs 1 --filter 'attn_shake/*wgmma*' > $D/w/san-shake-$tool.log 2>&1; st "shake wgmma $tool" $?
done
for r in 1 2; do
  for b in var/bench_dense_prev bin/bench_dense; do
    n=$(basename $b)
    BENCH_ONLY="TC door: wgmma" timeout 60 $b > $D/w/bench-$n-$r.md 2>$D/w/bench-$n-$r.err; st "bench $n $r" $?
  done
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis"
BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 90 $NCU --kernel-name regex:"attn_tc_wg|attn_combine_f32" --launch-count 2 $SEC bin/bench_dense > $D/w/ncu-bench_dense.txt 2>&1; st "ncu" $?
cd $D/w
grep -E "FAIL|Synthesis|\[----\]" tc-attn.log | tail -n 30
grep -E "FAIL|Synthesis|\[----\]" attn-shake.log | tail -n 8
for f in san-*.log; do echo "$f: $(tail -n 2 $f | tr '\n' ' ')"; done
for f in bench-*.md; do echo "== $f"; grep -E "TC door: wgmma" $f | cut -d'|' -f2-6 | head -12; done
for f in ncu-*.txt; do echo "== $f"; grep -E "attn_tc_wg|attn_combine|Duration|DRAM Throughput|Grid Size|Cluster Size" $f | head -24; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
