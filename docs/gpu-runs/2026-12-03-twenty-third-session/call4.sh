#!/bin/bash
# twenty-third session, call 4: probe_door_arms (tf32 against bf16, 3 rounds), then the whole GPU
# tier with the sanitizer tier and the benchmarks at the session's commit (the bf16 door arm; the
# split_invariance seeds of the twenty-second session replayed on the GPU for the first time)
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 timeout 60 bin/probe_door_arms --rounds 3 > $D/w/probe.md 2>&1; echo "probe rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
OUT=$R/bundle/out SANITIZE_TIMEOUT=300 timeout 565 ./run-gpu-tier.sh --parallel --sanitize --bench --jobs 4 > $D/w/tier.log 2>&1; echo "tier rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
cp out/goals.md $D/w/ 2>/dev/null
tar -czf $D/w/logs.tar.gz out/logs out/*.log out/*.json out/*.md 2>/dev/null
cd $D/w
cat probe.md
tail -14 tier.log
cat goals.md 2>/dev/null | head -40
grep -E "^\| (attn|decompress|absorb|kpool)" $R/bundle/out/torch_peer.log 2>/dev/null | head -30
cat steps.txt
cd $D && tar -czf call4.tar.gz -C w . && rm -rf w
