#!/bin/bash
# twenty-first session, call 3: the whole GPU tier with the sanitizer tier and the benchmarks at
# the session's test commit (the tf32 door's rounding tests, bench_dense's decompress_v input
# refilled); then the rounding tests once more with their logged margins
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
OUT=$R/bundle/out SANITIZE_TIMEOUT=300 timeout 520 ./run-gpu-tier.sh --parallel --sanitize --bench --jobs 4 > $D/w/tier.log 2>&1; echo "tier rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
timeout 30 bin/tc_attn_gpu_test --filter='*/*rounding*' --verbose > $D/w/rounding.txt 2>&1; echo "rounding rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
cp out/goals.md $D/w/ 2>/dev/null
tar -czf $D/w/logs.tar.gz out/logs out/*.log out/*.json out/*.md 2>/dev/null
cd $D/w
tail -14 tier.log
grep -E "^\[----\].*rounding|Synthesis" rounding.txt
cat goals.md 2>/dev/null | head -40
grep -E "^\| (attn|decompress|absorb|kpool)" $R/bundle/out/torch_peer.log 2>/dev/null | head -30
cat steps.txt
cd $D && tar -czf call3.tar.gz -C w . && rm -rf w
