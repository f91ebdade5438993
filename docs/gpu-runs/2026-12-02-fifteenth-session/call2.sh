#!/bin/bash
# fifteenth session, call 2: A/B of the door's round-2 variants against 4704b69 (bench_dense's
# attn_absorbed rows, two interleaved rounds), SASS of the candidate, ncu durations of the door and
# the combine, then the whole GPU tier with the sanitizer tier and the benchmarks at b00cbc0 (v3).
# ab/: base (4704b69), v1 (the unmasked conversion and the NaN ballot), comb (4704b69 with the new
# combine), v2 (v1 + the combine: 2376fa3's kernels); bin/bench_dense is v3 (v2 + the pair's NaN test).
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
[ -d ab ] || tar -xJf ab.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
( export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
  cp bin/bench_dense ab/bench_dense_v3
  cuobjdump -sass ab/v3.cubin > $D/w/sass-v3.txt 2>&1
  for r in 1 2; do for v in base v1 comb v2 v3; do
    BENCH_ONLY="attn_absorbed" MLA_BENCH_JSON=$D/w/ab-$v-$r.json timeout 90 ab/bench_dense_$v 30 > $D/w/ab-$v-$r.txt 2>&1
    echo "ab $v $r rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
  done; done
  for w in "decode" "decode t_kv 8192"; do
    tag=$(echo $w | tr ' ' '_')
    BENCH_ONLY="$w TC door: tf32" timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:"attn_tc_f32|attn_combine" --launch-skip 4 --launch-count 6 ab/bench_dense_v3 20 > $D/w/ncu-dur-v3-$tag.txt 2>&1
    echo "ncu $tag rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
  done )
OUT=$R/bundle/out SANITIZE_TIMEOUT=300 timeout 480 ./run-gpu-tier.sh --parallel --sanitize --bench --jobs 4 > $D/w/tier.log 2>&1; echo "tier rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
cp out/goals.md $D/w/ 2>/dev/null
tar -czf $D/w/logs.tar.gz out/logs out/*.log out/*.json out/*.md 2>/dev/null
cd $D/w
tail -30 tier.log
cat steps.txt
cd $D && tar -czf call2.tar.gz -C w . && rm -rf w
