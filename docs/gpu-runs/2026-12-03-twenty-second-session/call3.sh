#!/bin/bash
# twenty-second session, call 3: probe_absorb_tail (the part geometries of absorb_q's decode arm,
# the launcher now 128 x 2), then the whole GPU tier with the sanitizer tier and the benchmarks at
# the session's commit (absorb_q_reg_f32 in blocks of 128 columns, two threads a column)
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 timeout 60 bin/probe_absorb_tail > $D/w/probe.txt 2>&1; echo "probe rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
OUT=$R/bundle/out SANITIZE_TIMEOUT=300 timeout 500 ./run-gpu-tier.sh --parallel --sanitize --bench --jobs 4 > $D/w/tier.log 2>&1; echo "tier rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
cp out/goals.md $D/w/ 2>/dev/null
tar -czf $D/w/logs.tar.gz out/logs out/*.log out/*.json out/*.md 2>/dev/null
cd $D/w
cat probe.txt
tail -14 tier.log
cat goals.md 2>/dev/null | head -40
grep -E "^\| (attn|decompress|absorb|kpool)" $R/bundle/out/torch_peer.log 2>/dev/null | head -30
cat steps.txt
cd $D && tar -czf call3.tar.gz -C w . && rm -rf w
