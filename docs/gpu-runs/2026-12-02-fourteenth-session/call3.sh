#!/bin/bash
# fourteenth session, call 3 (final): probe_dense_flat, then the whole
# GPU tier with the sanitizer tier and the benchmarks at this commit
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
cat COMMIT > $D/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/steps.txt
( export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
  for n in 1 2; do timeout 60 bin/probe_dense_flat > $D/probe$n.txt 2>&1; echo "probe$n rc=$? $((SECONDS-T0)) s" >> $D/steps.txt; done )
OUT=$R/bundle/out SANITIZE_TIMEOUT=300 timeout 560 ./run-gpu-tier.sh --parallel --sanitize --bench --jobs 4 > $D/tier.log 2>&1; echo "tier rc=$? $((SECONDS-T0)) s" >> $D/steps.txt
cp out/goals.md $D/ 2>/dev/null
tar -czf $D/logs.tar.gz out/logs out/*.log out/*.json out/*.md $D/probe*.txt 2>/dev/null
cat $D/probe1.txt | tail -24
tail -45 $D/tier.log
cat $D/steps.txt
