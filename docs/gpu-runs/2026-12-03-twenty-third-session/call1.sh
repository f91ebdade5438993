#!/bin/bash
# twenty-third session, call 1: the bf16 door arm's first run. The model (H16) and conversion
# tests, every tc_attn case of the bf16 arm (and the width-640 decline), the golden suites' bf16
# checks (every attention fixture case, dense and k-pool), then bench_dense's rows.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
export MLA_ORACLE_CACHE=$(pwd)/out/oc && mkdir -p $MLA_ORACLE_CACHE
mkdir -p $D/w
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; }
timeout 120 bin/bf16_mma_model_gpu_test --verbose -j4 > $D/w/model.txt 2>&1; st model $?
timeout 240 bin/tc_attn_gpu_test -j8 --filter='*@(bf16|wide)*' > $D/w/tc_attn.txt 2>&1; st tc_attn $?
timeout 200 bin/dense_gpu_goldens_test -j16 --filter='*/*__attn_absorbed_tcbf16' > $D/w/dense.txt 2>&1; st dense $?
timeout 200 bin/kpool_gpu_goldens_test -j16 --filter='*/*__@(attn_absorbed_tcbf16|attn_gathered_tcbf16)' > $D/w/kpool.txt 2>&1; st kpool $?
timeout 150 bin/bench_dense > $D/w/bench.md 2> $D/w/bench.err; st bench $?
cd $D/w
grep -E "u of|subnormal|conversions|max error|cancellation" model.txt | head
tail -3 model.txt tc_attn.txt dense.txt kpool.txt
grep -E "FAIL|fail" tc_attn.txt | head -20
grep -E "FAIL" dense.txt kpool.txt | head -10
grep -E "^\| attn_absorbed" bench.md | head -24
grep receipt bench.err | head
cat steps.txt
cd $D && tar -czf call1.tar.gz -C w . && rm -rf w
