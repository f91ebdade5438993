#!/bin/bash
# Twenty-ninth session, call 3: the GPU tier with benchmarks and the goals table at COMMIT (the
# plain wgmma walk with its shared accesses as LDS / STS), then the wgmma rows of
# var/bench_dense_prev (6af2ec2, generic shared accesses) and of COMMIT's bench_dense,
# alternately, for the A/B in one run.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
xz -d var/*.xz; chmod +x var/*
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
OUT=$R/bundle/out timeout 400 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
cp out/goals.md $D/ 2>/dev/null; tail -n 16 $D/w/tier.log > $D/tier-tail.txt
for r in 1 2 3; do
  for b in var/bench_dense_prev bin/bench_dense; do
    n=$(basename $b)
    BENCH_ONLY="TC door: wgmma" timeout 60 $b > $D/w/ab-$n-$r.md 2>$D/w/ab-$n-$r.err; st "bench $n $r" $?
  done
done
tar -czf $D/w/logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
cd $D/w
for f in ab-*.md; do echo "== $f"; grep -E "TC door: wgmma" $f | cut -d'|' -f2-6 | head -12; done
tail -n 16 tier.log
head -n 40 goals.md 2>/dev/null
cat steps.txt
cd $D && tar -czf w.tar.gz w && cp w/steps.txt w/goals.md . 2>/dev/null; rm -rf w
