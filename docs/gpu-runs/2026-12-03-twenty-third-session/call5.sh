#!/bin/bash
# twenty-third session, call 5: at the fixed commit, tc_attn_gpu_test (the new small_rank cases)
# with the benchmarks, the peer and the goals (bench_kpool's JSON fixed); compute-sanitizer memcheck
# and racecheck on the bf16 arm's forms the tier's set did not reach; then a mutation pass over
# 20 sampled mutants of attn_tc_bf16 (seed 23), against every check that applies.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
[ -d relink ] || tar -xJf relink.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
cat COMMIT > $D/w/steps.txt
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; }
OUT=$R/bundle/out timeout 200 ./run-gpu-tier.sh --bench --filter 'tc_attn_gpu_test' > $D/w/tier.log 2>&1; st tier $?
cp out/goals.md out/bench-*.json out/peer-torch.json $D/w/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 bin/tc_attn_gpu_test -j4 --filter='*/@(glm5_next_decode__bf16|small_rank__*)' > $D/w/san_$tool.txt 2>&1; st san_$tool $?
done
timeout 400 python3 tools/mutate.py run --bundle . --file mla_attn.cu --kernel attn_tc_bf16 --sample 20 --seed 23 \
  --jobs 16 --timeout 150 --sanitizer-timeout 200 --deadline 230 --grace 120 --prime-baselines --out $D/mutate > $D/mutate.log 2>&1; st mutate $?
cd $D/w
tail -12 tier.log
cat goals.md | head -12
grep -E "SUMMARY|Synthesis" san_*.txt
sed -n '1,60p' $D/mutate/mutation-report.md
tail -4 $D/mutate.log
cat steps.txt
cd $D && tar -czf call5.tar.gz w mutate mutate.log && rm -rf w
