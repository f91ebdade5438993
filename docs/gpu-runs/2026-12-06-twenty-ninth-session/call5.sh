#!/bin/bash
# Twenty-ninth session, call 5: the bundle of 2cb2481 (bin/bench_dense: the plain wgmma walk with
# LDS / STS) against two working-tree builds: var/bench_dense_ef (the arm's cache reads with an
# L2 evict-first policy, so the partials stay in L2 for the combine) and var/bench_dense_ef_cs
# (the same, and the combine's partial loads as __ldcs, every arm's combine). Three rounds
# alternately, the decode rows of attn_absorbed (every arm) and the wgmma rows; then ncu of the
# evict-first arm's walk and combine at decode 32K.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
xz -d var/*.xz; chmod +x var/*
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
for r in 1 2 3; do
  for b in bin/bench_dense var/bench_dense_ef var/bench_dense_ef_cs; do
    n=$(basename $b)
    BENCH_ONLY="attn_absorbed decode" timeout 60 $b > $D/w/dec-$n-$r.md 2>$D/w/dec-$n-$r.err; st "decode rows $n $r" $?
    BENCH_ONLY="TC door: wgmma" timeout 60 $b > $D/w/wg-$n-$r.md 2>$D/w/wg-$n-$r.err; st "wgmma rows $n $r" $?
  done
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
SEC="--section SpeedOfLight --section MemoryWorkloadAnalysis"
for b in bin/bench_dense var/bench_dense_ef; do
  n=$(basename $b)
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 90 $NCU --cache-control none --kernel-name regex:"attn_tc_wg|attn_combine_f32" --launch-count 2 $SEC $b > $D/w/ncu-$n.txt 2>&1; st "ncu $n" $?
done
cd $D/w
for f in dec-*.md wg-*.md; do echo "== $f"; grep -E "^\| attn_absorbed" $f | cut -d'|' -f2-6 | head -14; done
for f in ncu-*.txt; do echo "== $f"; grep -E "attn_tc_wg|attn_combine|Duration|DRAM Throughput|L2 Hit Rate" $f | head -16; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
