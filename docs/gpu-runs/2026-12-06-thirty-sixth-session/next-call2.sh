#!/bin/bash
# For the next session (written in the thirty-sixth; not run): the wgmma door's conversions by the
# producer warpgroup's three idle warps (branch wgmma-conv3, 49d0629 on main 637cf11), measured
# against main. Assemble as the thirty-sixth session's call 3: bundle/ = main's bundle
# (tools/harness bundle, golden/ removed), plus conv3/tests.tar.xz (bin/tc_attn_gpu_test and
# bin/attn_shake_gpu_test built on the branch) and two perf arms (arms/main, arms/conv3:
# bin/bench_dense and bin/bench_kpool, xz'd, each with its COMMIT).
# Why (call 4's profile): warpgroup 1 converted each tile between its own P . V's (about 1.5 us a
# tile of work, 1 us a tile waiting for its stages), warpgroup 0 waited for the converted tile 15%
# of the samples, and nothing was converted while the consumers loaded q (the prologue, 18%).
# Expected (written before): bytes identical to main on every row (the same conversions, values
# and order); the walk at decode 32K 39.7 -> 34-36 us and the door 45.6 -> 40-42 us (tiles 0 and
# 1 converted under the q prologue, the tile's chain about 3.4-3.8 us instead of 4.9). A risk:
# the converters hold 40 registers (setmaxnreg.dec); ptxas reports 168 a thread and no spills for
# the kernel, but no disassembler here shows the converter region's registers: a wrong result or
# an illegal-instruction error in the wgmma cases would say that it did not fit.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
tar -C conv3 -xJf conv3/tests.tar.xz
for f in arms/*/bin/*.xz; do xz -d $f; done; chmod +x arms/*/bin/* conv3/bin/*
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT arms/*/COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
FW='*/@(*wgmma*|combine_forms*)'
timeout 120 conv3/bin/tc_attn_gpu_test --jobs 8 --filter "$FW" > $D/w/conv3-tc.log 2>&1; st "conv3 tc_attn_gpu_test (wgmma, combine_forms)" $?
timeout 60 conv3/bin/attn_shake_gpu_test --jobs 8 > $D/w/conv3-shake.log 2>&1; st "conv3 attn_shake_gpu_test" $?
BENCH_ONLY="attn_" timeout 100 python3 tools/perf_compare.py ab --base arms/main \
  --change arms/conv3 --repeats 6 --benches bench_dense,bench_kpool --out $D/w/perf-conv3 > $D/w/perf-conv3.log 2>&1; st "perf gate main->conv3" $?
FS='*/@(partial_heads__wgmma|glm5_decode__wgmma|gathered__wgmma|twin_exact__wgmma_verify|one_chunk_13_heads__wgmma|heads96__wgmma|glm5_decode_odd__wgmma)'
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 conv3/bin/tc_attn_gpu_test --jobs 7 --filter "$FS" > $D/w/conv3-$tool.log 2>&1; st "conv3 $tool" $?
done
for v in main conv3; do
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 40 ncu --cache-control none --clock-control none \
    --kernel-name regex:"attn_tc_wg" --launch-skip 4 --launch-count 1 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum \
    arms/$v/bin/bench_dense > $D/w/ncu-$v.txt 2>&1; st "ncu $v" $?
done
cd $D/w
grep -E "Synthesis" conv3-tc.log conv3-shake.log; grep -E "FAIL" conv3-tc.log | head -5
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Synthesis" conv3-memcheck.log conv3-racecheck.log conv3-synccheck.log
echo "== perf"; cat perf-conv3/perf-compare.md 2>/dev/null | grep -E "^\| bench" | grep -E "wgmma" | cut -d'|' -f3-10; tail -n 2 perf-conv3.log
for v in main conv3; do echo "== $v"; grep -E "gpu__time|dram__|sm__thr|inst_executed" ncu-$v.txt | sed 's/  */ /g' | head -6; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/perf-conv3/perf-compare.md perf-conv3.md 2>/dev/null; rm -rf w
