#!/bin/bash
# Twenty-ninth session, call 4: the twenty-seventh session's next-call2.sh (owed since the
# twenty-sixth session): the sanitizer tier alone at its defaults (as the twenty-fifth session's
# call 1), with tc_attn_gpu/san_exact_alloc__* and attn_shake/empty_partial_nan_ws__* in its case
# sets, on COMMIT.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
cat COMMIT > $D/w/steps.txt
OUT=$R/bundle/out timeout 560 ./run-gpu-tier.sh --sanitize --filter '__no_test__' > $D/w/tier.log 2>&1; echo "tier rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
cp out/sanitize-report.md out/sanitize-report.json $D/w/ 2>/dev/null
tar -czf $D/w/cases.tar.gz -C out cases census 2>/dev/null
tar -czf $D/w/logs.tar.gz -C out logs 2>/dev/null
cd $D/w
grep -E "^\| |Steps:|Near|Wall" sanitize-report.md | grep -v "^| ---" | cut -c1-400
tail -5 tier.log
cat steps.txt
