#!/bin/bash
# twenty-fourth session, call 1: the whole GPU tier with the sanitizer tier and the benchmarks at
# a836a07 (the review commit of the twenty-third session: its tests' bf16 rounding through the
# oracle, bench_kpool's door_arm struct; never run on the GPU), then an ad hoc probe of clusters
# at the bf16 door's block shape (cluster_probe.cu in this folder).
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
timeout 30 ./cluster_probe > $D/w/cluster_probe.md 2>&1; echo "cluster_probe rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
OUT=$R/bundle/out SANITIZE_TIMEOUT=300 timeout 545 ./run-gpu-tier.sh --parallel --sanitize --bench --jobs 4 > $D/w/tier.log 2>&1; echo "tier rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
cp out/goals.md out/bench-*.json out/peer-torch.json $D/w/ 2>/dev/null
tar -czf $D/w/logs.tar.gz out/logs out/*.log out/*.json out/*.md 2>/dev/null
cd $D/w
cat cluster_probe.md
tail -14 tier.log
cat goals.md 2>/dev/null | head -40
cat steps.txt
cd $D && tar -czf call1.tar.gz -C w . && rm -rf w
