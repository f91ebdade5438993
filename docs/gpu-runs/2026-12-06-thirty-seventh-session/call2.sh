#!/bin/bash
# Thirty-seventh session, call 2: main 5490aeb (bundle built here from main; the same script as
# the thirty-sixth session's call1.sh, whose comment below was written for 8e2132d) - the whole GPU
# tier with benchmarks and the goals table, on the machine call 1 left warm.
# It ran as bundle/call.sh straight after call 1, within the warm machine's 30 s, so no expectation
# was written down for it here (the branch's tier in call 1 had just passed with the same tests).
# Thirty-sixth session, call 1: main at 8e2132d (its device code as 95f7115),
# merged as b7e6a45) - the whole GPU tier with benchmarks and the goals table, nothing else (the
# thirty-fifth session had about 220 s left, too little to start a machine).
# Expected (written before): 830 passed, 0 failed, 34 skipped, as call A's tier of the branch; the
# door goal's row about 45-46 us on an H100 (call B's perf gate: 45.25), 47 on an H200 would be
# a surprise (the floors' ratio says about 33).
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
OUT=$R/bundle/out timeout 215 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
cp out/goals.md $D/ 2>/dev/null; tail -n 16 $D/w/tier.log > $D/tier-tail.txt
tar -czf $D/w/tier-logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
cd $D/w; tail -n 3 tier.log; cat goals.md 2>/dev/null; cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
