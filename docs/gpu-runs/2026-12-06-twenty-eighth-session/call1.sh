#!/bin/bash
# Twenty-eighth session, call 1 (the first machine that started): the wgmma door arm
# (kernels/mla_attn_wg.cu, MEMRA_MLA_TC_ATTN=wgmma) and its model test for the first time, with
# the prototype's fourth form. Binaries from the working tree (bundle/var), the bundle's libraries.
#  1. wgmma_model_gpu_test (the accumulator model (H16) for wgmma.m64n32k16 / m64n256k16);
#  2. tc_attn_gpu_test whole (every arm; the __wgmma cases new), attn_shake_gpu_test;
#  3. memcheck and racecheck on the wgmma cases of glm5's width that are small;
#  4. probe_door_wgmma (the prototype's fourth form) timed, and bench_dense (the goals' rows).
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
SAN=/usr/local/cuda/bin/compute-sanitizer
timeout 60 var/wgmma_model_gpu_test --jobs 1 --verbose > $D/w/wgmma-model.log 2>&1; st wgmma_model_gpu_test $?
timeout 150 var/tc_attn_gpu_test --jobs 8 > $D/w/tc-attn.log 2>&1; st tc_attn_gpu_test $?
timeout 60 var/attn_shake_gpu_test --jobs 4 > $D/w/attn-shake.log 2>&1; st attn_shake_gpu_test $?
F='tc_attn_gpu/@(partial_heads|gathered|inf_rope|low_payload_nan|glm5_decode_odd)__wgmma'
for tool in memcheck racecheck; do
  timeout 100 $SAN --tool $tool --error-exitcode 3 var/tc_attn_gpu_test --jobs 1 --filter "$F" > $D/w/san-$tool.log 2>&1; st "tc_attn wgmma $tool" $?
done
timeout 60 var/probe_door_wgmma --rounds 3 > $D/w/probe-wgmma.md 2>&1; st probe_door_wgmma $?
timeout 150 var/bench_dense > $D/w/bench-dense.md 2> $D/w/bench-dense.err; st bench_dense $?
cd $D/w
tail -n 12 wgmma-model.log
grep -E "FAIL|Synthesis|\[----\]" tc-attn.log | tail -n 30
tail -n 3 attn-shake.log
for f in san-*.log; do echo "$f: $(tail -n 2 $f | tr '\n' ' ')"; done
cat probe-wgmma.md
grep -E "attn_absorbed|attn_gathered" bench-dense.md | head -40
grep receipt bench-dense.err | head -20
cat steps.txt
cd $D && tar -czf w.tar.gz w && cp w/steps.txt w/probe-wgmma.md . 2>/dev/null; rm -rf w
