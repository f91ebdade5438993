#!/bin/bash
# For the next session (written in the thirty-sixth, whose device time ran out before it): main
# at 3fe969b or later (rebuild the bundle with tools/harness bundle and keep relink.tar.xz; the
# mutant id is an offset into kernels/mla_attn.cu, unchanged in attn_tc_bf16 since b7e6a45: rebuild
# it by content if that moved, docs/mutation.md). The new edge ninf_latent_col64_exact_q on every
# arm (unmutated), then the bf16 door's survivor e89fd74d1a (`if (s >= ksw) break;` -> `if (0)
# break;`: a warp's logits loop past its own k16 steps) against tc_attn_gpu_test's bf16 cases.
# Predicted (written before): the edge passes on all five arms; the mutant is killed by
# ninf_latent_col64_exact_q__bf16 (every head poisoned where the oracle drops row 123).
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
tar -xJf relink.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
timeout 40 bin/tc_attn_gpu_test --jobs 5 --filter '*/ninf_latent_col64*' > $D/w/edge.log 2>&1; st "edge, 5 arms" $?
timeout 170 python3 tools/mutate.py run --bundle . --ids e89fd74d1a \
  --checks '^tc_attn_gpu_test --filter' --jobs 1 --timeout 140 --deadline 160 --grace 8 \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st "mutate e89fd74d1a" $?
cd $D/w
grep -E "Synthesis|FAIL" edge.log | head -6
grep -E "^\*\*Total|^\| e89" mutate/mutation-report.md | cut -c1-240; tail -n 3 mutate.log
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/mutate/mutation-report.md . 2>/dev/null; rm -rf w
