#!/bin/bash
# Thirty-third session, call 6 (warm, the budget's last ~200 s): compute-sanitizer on branch
# combine-vec2's binaries (var/, unpacked by call 5 on this machine is not assumed: unpack again).
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
mkdir -p out && tar -C out -xJf lib.tar.xz
for f in var/*.xz; do [ -f "$f" ] && xz -dk $f; done; chmod +x var/*_new
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat var/COMMIT_NEW > $D/w/steps.txt
for tool in memcheck racecheck; do
  timeout 50 compute-sanitizer --tool $tool --error-exitcode 9 var/decode_split_gpu_test_new --jobs 8 > $D/w/$tool-split.log 2>&1; st "$tool decode_split (branch)" $?
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 var/tc_attn_gpu_test_new --jobs 8 --filter '*/@(glm5_decode__*|partial_heads__*|san_exact_alloc__*|gathered__*)' > $D/w/$tool-tc.log 2>&1; st "$tool tc_attn subset (branch)" $?
done
cd $D/w
grep -E "Synthesis|ERROR SUMMARY|RACECHECK SUMMARY" *.log | head -12
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
