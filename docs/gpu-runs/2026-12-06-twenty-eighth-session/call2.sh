#!/bin/bash
# Twenty-eighth session, call 2: the wgmma door arm after its converter reads each stage's valid
# rows once into a register mask (var/bench_dense_a, at 7db38cc), and with that and the causal
# walk's stage as one bulk copy (var/bench_dense, the working tree after it). Call 1: the arm at
# decode 32K 58.1 us against the prototype's 44.1, about 1.5 us a tile more at every row.
# Both benches and the prototype in one run, the arm's tests, then ncu on one decode-32K launch
# of the arm and of the prototype.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
timeout 150 var/bench_dense_a > $D/w/bench-dense-a.md 2> $D/w/bench-dense-a.err; st bench_dense_a $?
timeout 150 var/bench_dense > $D/w/bench-dense.md 2> $D/w/bench-dense.err; st bench_dense $?
timeout 60 var/probe_door_wgmma --rounds 3 > $D/w/probe-wgmma.md 2>&1; st probe_door_wgmma $?
timeout 100 var/tc_attn_gpu_test --jobs 8 --filter '*/*wgmma*' > $D/w/tc-attn.log 2>&1; st "tc_attn_gpu_test wgmma" $?
timeout 60 var/attn_shake_gpu_test --jobs 4 > $D/w/attn-shake.log 2>&1; st attn_shake_gpu_test $?
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
SEC="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
MEMRA_MLA_TC_ATTN=wgmma timeout 120 $NCU --kernel-name regex:attn_tc_wg --launch-skip 3 --launch-count 1 $SEC var/bench_dense > $D/w/ncu-arm.txt 2>&1; st "ncu arm" $?
timeout 120 $NCU --kernel-name regex:wg_walk --launch-count 1 $SEC var/probe_door_wgmma --once > $D/w/ncu-proto.txt 2>&1; st "ncu prototype" $?
cd $D/w
echo "== a: the mask fix"; grep -E "attn_absorbed" bench-dense-a.md | grep -E "wgmma|tf32" | cut -c1-110
echo "== b: and one copy a causal stage"; grep -E "attn_absorbed" bench-dense.md | grep -E "wgmma|bf16|tf32" | cut -c1-110
head -n 8 probe-wgmma.md
grep -E "Synthesis" tc-attn.log attn-shake.log
for f in ncu-arm.txt ncu-proto.txt; do echo "== $f"; grep -E "attn_tc_wg|wg_walk|Duration|DRAM Throughput|Memory Throughput|No Eligible|Active Warps Per|Eligible Warps|Issued Warp" $f | head -14; done
cat steps.txt
cd $D && tar -czf w.tar.gz w && cp w/steps.txt . 2>/dev/null; rm -rf w
