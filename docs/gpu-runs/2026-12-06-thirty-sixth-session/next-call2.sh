#!/bin/bash
# For the next session (written in the thirty-sixth; not run): the two levers the thirty-sixth
# session's profile named, each against the step before it, in one call.
#  - conv3 (branch wgmma-conv3, 49d0629 on main 637cf11): the conversions by the producer
#    warpgroup's three idle warps, from the walk's start and as soon as a tile buffer is free;
#  - qprep (branch wgmma-qprep, 96b40f8 on conv3): q prepared once in bf16 (attn_wg_qprep) into the
#    workspace and copied into each block by one bulk copy, with several chunks.
# Assembled in .gpu/next-levers/bundle (cp -r it to bundle/; run "bash bundle/call.sh", carry
# bundle): main 3827be0's bundle, conv3/ and qprep/tests.tar.xz (bin/tc_attn_gpu_test and
# bin/attn_shake_gpu_test of each branch), arms/{main,conv3,qprep} (bench_dense, bench_kpool).
# Why (call 4's profile, H100, decode 32K): warpgroup 1 converted each tile between its own P . V's
# (about 1.5 us a tile, 1 us a tile waiting for its stages) and warpgroup 0 waited for the
# converted tile 15% of the samples; the prologue (every block loading q in f32, 147 KB from L2,
# 2,013 instructions a warp) took 18%.
# Expected (written before): bytes identical to main on every row in both (the same conversions
# and values in the same order); conv3: the walk 39.7 -> 34-36 us, the door 45.6 -> 40-42 us;
# qprep on top: the door 1-3 us faster again at decode (the prologue 7-8 -> about 2 us, less the
# preparing kernel's launch, about 2.5 us), no change at one chunk. conv3's converters hold 40
# registers (setmaxnreg.dec): ptxas allocates such a region within its limit and spills what does
# not fit (checked here on a probe kernel: setmaxnreg.dec 24 before 48 live floats, 232 bytes of
# spills), and reports no spills for the walk, so the converters fit.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
for v in conv3 qprep; do tar -C $v -xJf $v/tests.tar.xz; chmod +x $v/bin/*; done
for f in arms/*/bin/*.xz; do xz -d $f; done; chmod +x arms/*/bin/*
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT arms/*/COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
FW='*/@(*wgmma*|combine_forms*)'
FS='*/@(partial_heads__wgmma|glm5_decode__wgmma|gathered__wgmma|twin_exact__wgmma_verify|one_chunk_13_heads__wgmma|heads96__wgmma|glm5_decode_odd__wgmma)'
for v in conv3 qprep; do
  timeout 120 $v/bin/tc_attn_gpu_test --jobs 8 --filter "$FW" > $D/w/$v-tc.log 2>&1; st "$v tc_attn_gpu_test (wgmma, combine_forms)" $?
  timeout 60 $v/bin/attn_shake_gpu_test --jobs 8 > $D/w/$v-shake.log 2>&1; st "$v attn_shake_gpu_test" $?
  for tool in memcheck racecheck synccheck; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $v/bin/tc_attn_gpu_test --jobs 7 --filter "$FS" > $D/w/$v-$tool.log 2>&1; st "$v $tool" $?
  done
done
BENCH_ONLY="attn_" timeout 100 python3 tools/perf_compare.py ab --base arms/main \
  --change arms/conv3 --repeats 6 --benches bench_dense,bench_kpool --out $D/w/perf-conv3 > $D/w/perf-conv3.log 2>&1; st "perf gate main->conv3" $?
BENCH_ONLY="attn_" timeout 100 python3 tools/perf_compare.py ab --base arms/conv3 \
  --change arms/qprep --repeats 6 --benches bench_dense,bench_kpool --out $D/w/perf-qprep > $D/w/perf-qprep.log 2>&1; st "perf gate conv3->qprep" $?
for v in main conv3 qprep; do
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 40 ncu --cache-control none --clock-control none \
    --kernel-name regex:"attn_tc_wg|attn_wg_qprep|attn_combine" --launch-skip 6 --launch-count 3 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum \
    arms/$v/bin/bench_dense > $D/w/ncu-$v.txt 2>&1; st "ncu $v" $?
done
cd $D/w
grep -E "Synthesis" *-tc.log *-shake.log; grep -E "FAIL" *-tc.log | head -5
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Synthesis" *-memcheck.log *-racecheck.log *-synccheck.log
for g in conv3 qprep; do echo "== perf $g"; grep -E "^\| bench" perf-$g/perf-compare.md 2>/dev/null | grep -E "wgmma" | cut -d'|' -f3-10; tail -n 1 perf-$g.log; done
for v in main conv3 qprep; do echo "== $v"; grep -E "attn_tc_wg|attn_wg_qprep|attn_combine|gpu__time|dram__|sm__thr|inst_executed" ncu-$v.txt | sed 's/  */ /g' | cut -c1-90 | head -18; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; for g in conv3 qprep; do cp w/perf-$g/perf-compare.md perf-$g.md 2>/dev/null; done; rm -rf w
