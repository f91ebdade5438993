#!/bin/bash
# For the next session, call 1: a bundle of branch combine-vec2 (build it there:
# `git checkout combine-vec2 && rm -rf bundle && tools/harness bundle bundle && rm -rf bundle/golden
# && git rev-parse --short HEAD > bundle/COMMIT`). The branch's whole GPU tier with benchmarks and
# the goals table (on an H200 this is issue 12's done-run), then its new combine_forms cases
# (never run: the one-column form over whole batches) plain and under memcheck, and racecheck of
# the attention suites' small sets. If all pass: merge combine-vec2 (fast-forward after rebase);
# then next-call2.sh: branch combine-allflight (every chunk in flight) against it.
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
OUT=$R/bundle/out timeout 300 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
cp out/goals.md $D/ 2>/dev/null; tail -n 16 $D/w/tier.log > $D/tier-tail.txt
tar -czf $D/w/tier-logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
timeout 60 bin/tc_attn_gpu_test --jobs 8 --filter '*/combine_forms*' > $D/w/forms.log 2>&1; st "combine_forms" $?
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 bin/tc_attn_gpu_test --jobs 5 --filter '*/combine_forms*' > $D/w/forms-memcheck.log 2>&1; st "combine_forms memcheck" $?
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 bin/attn_shake_gpu_test --jobs 8 > $D/w/shake-racecheck.log 2>&1; st "attn_shake racecheck" $?
cd $D/w
tail -n 3 tier.log; cat goals.md 2>/dev/null
grep -E "Synthesis|\[FAIL\]|ERROR SUMMARY|RACECHECK SUMMARY" forms.log forms-memcheck.log shake-racecheck.log | head
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
