#!/bin/bash
# Thirty-third session, call 4 (bundle of main at 634daf2): the GPU tier with benchmarks and
# the goals table, on whatever card the device gives (meant for an H200: the done-run).
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
OUT=$R/bundle/out timeout 420 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
cp out/goals.md $D/ 2>/dev/null; tail -n 16 $D/w/tier.log > $D/tier-tail.txt
tar -czf $D/w/tier-logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
cd $D/w
tail -n 3 tier.log; cat goals.md 2>/dev/null
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
