#!/bin/bash
# nineteenth session, call 2: the whole GPU tier with the sanitizer tier and the benchmarks at
# fe9de3c (the 3xtf32 arm rebuilt: its logits on the tensor cores, the f32 arm's P . V)
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
OUT=$R/bundle/out SANITIZE_TIMEOUT=300 timeout 540 ./run-gpu-tier.sh --parallel --sanitize --bench --jobs 4 > $D/w/tier.log 2>&1; echo "tier rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
cp out/goals.md $D/w/ 2>/dev/null
tar -czf $D/w/logs.tar.gz out/logs out/*.log out/*.json out/*.md 2>/dev/null
cd $D/w
grep -E "TC door: tf32|attn_absorbed .*(decode|verify)  " out/*.log 2>/dev/null | head -0
tail -14 tier.log; grep -rhE "prefill +TC door|decode +TC door: tf32 |verify +TC door: tf32 " $R/bundle/out --include=*.log 2>/dev/null | head -8
cat goals.md 2>/dev/null | head -40
grep -E "^\| (attn|decompress|absorb|kpool)" $R/bundle/out/torch_peer.log 2>/dev/null | head -30
cat steps.txt
cd $D && tar -czf call2.tar.gz -C w . && rm -rf w
