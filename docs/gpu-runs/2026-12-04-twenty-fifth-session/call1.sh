#!/bin/bash
# twenty-fifth session, call 1, at 1e35e2c: the sanitizer tier alone (no other load), as the tier
# runs it (--sanitize, SANITIZE_JOBS 12, SANITIZE_TIMEOUT 420), with dense_gpu_goldens_test's
# case set in its three new parts; the test binaries are filtered out (--filter), the corpus
# replays still run. Then the report's per-case times (Criterion's XML of each step).
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
OUT=$R/bundle/out timeout 560 ./run-gpu-tier.sh --sanitize --filter '__no_test__' > $D/w/tier.log 2>&1; echo "tier rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
cp out/sanitize-report.md out/sanitize-report.json $D/w/ 2>/dev/null
tar -czf $D/w/cases.tar.gz -C out cases census 2>/dev/null
tar -czf $D/w/logs.tar.gz -C out logs 2>/dev/null
cd $D/w
grep -E "^\| |Steps:|Near|Wall" sanitize-report.md | grep -v "^| ---" | cut -c1-400
tail -5 tier.log
cat steps.txt
