#!/bin/bash
# Written in the twenty-ninth session after its device time, NOT RUN: the next session's first
# call. Prepare: `tools/harness bundle bundle` on main; rm -rf bundle/golden;
# git rev-parse --short HEAD > bundle/COMMIT.
#  1. tc_attn_gpu/san_exact_alloc_inf__* (new: +inf in the cache's last row and first listed
#     row on exact allocations), plainly and under memcheck;
#  2. probe_door_wgmma --rounds 3: its new "stream alone" column (MODE 3) beside "stream +
#     convert" (docs/performance.md, twenty-ninth session: is it the stream or the conversions
#     that keep the walk 6 us over the read floor?);
#  3. the wgmma arm's mutation sample continued: the 27 ids without a verdict in call 6
#     (docs/mutation.md, "The wgmma arm's first sample"; offsets of mla_attn_wg.cu as at 2cb2481,
#     which main still has), with the memcheck stages, 16 at a time.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
[ -d relink ] || tar -xJf relink.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name --format=csv,noheader >> $D/w/steps.txt
timeout 60 bin/tc_attn_gpu_test --jobs 4 --filter 'tc_attn_gpu/san_exact_alloc_inf__*' > $D/w/inf.log 2>&1; st "exact_alloc_inf" $?
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 3 bin/tc_attn_gpu_test --jobs 1 --filter 'tc_attn_gpu/san_exact_alloc_inf__*' > $D/w/inf-memcheck.log 2>&1; st "exact_alloc_inf memcheck" $?
timeout 120 bin/probe_door_wgmma --rounds 3 > $D/w/probe-wgmma.md 2>&1; st probe_door_wgmma $?
IDS=b7ab3bc370,9207e879c1,ac407e68e7,b68148a1c3,ddcd7f3bcb,0e915b6054,69af42842c,1119b792f1,08043a37ea,639ced6cb9,e0cb624b7d,6e34051d93,0adbfd64c1,eb128edd8a,1a310a4f69,3c65bdc1f5,d9e571b0d6,6102ef9023,4285863862,1cdcea6629,eaddadd1b9,d1dfff7086,8cf167c36e,a1b4704dc2,6909718308,c9aaadb002,8a1b6bb73b
timeout 380 python3 tools/mutate.py run --bundle . --file mla_attn_wg.cu --ids $IDS \
  --checks 'tcwgmma|tc_attn_gpu_test|attn_shake_gpu_test' \
  --jobs 16 --timeout 150 --sanitizer-timeout 200 --deadline 200 --grace 100 --prime-baselines \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st mutate $?
cd $D/w
grep -E "Synthesis|FAIL" inf.log | tail -4; tail -n 2 inf-memcheck.log
cut -c1-260 probe-wgmma.md
sed -n '1,60p' mutate/mutation-report.md
cat steps.txt
cd $D && tar -czf w.tar.gz w; rm -rf w
