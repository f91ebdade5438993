#!/bin/bash
# Thirty-seventh session, call 1: the branch qprep-r (1d23498: main 5490aeb with the conv3 and
# qprep commits of the thirty-sixth session cherry-picked, device code as 96b40f8) - the whole GPU
# tier with benchmarks and the goals table (a merge candidate: if it passes and is faster, this is
# the tier of the main it becomes); then the perf gates main -> conv3 -> qprep (arms built at
# 3827be0 / 49d0629 / 96b40f8 in the thirty-sixth session: the same device code as main 5490aeb,
# conv3-r 24bde78 and qprep-r 1d23498); conv3's own correctness and sanitizers; the sanitizers on
# qprep's wgmma cases; the branch qprep-pdl (108ae51 on qprep-r: the walk launched as a
# programmatic dependent of attn_wg_qprep, streaming the first tile while q is prepared): its
# wgmma cases, shake and sanitizers, and the perf gate qprep -> pdl; ncu on the three walks; last, the bf16 door's survivor mutant e89fd74d1a
# against tc_attn_gpu_test (the new edge ninf_latent_col64_exact_q runs in the tier on every arm).
# Expected (written before): tier 835 passed, 0 failed, 34 skipped (the thirty-sixth session's 830
# and the new edge's 5 cases); bytes identical
# to main on every wgmma row; conv3: walk 39.7 -> 34-36 us, door 45.6 -> 40-42 us (H100);
# qprep on top: 1-3 us more at decode, none at one chunk; pdl on top: 1-2 us more at decode (the
# preparation's launch and run hidden behind the first tile's stages), none at one chunk; the mutant killed by
# ninf_latent_col64_exact_q__bf16.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
for v in conv3 pdl; do tar -C $v -xJf $v/tests.tar.xz; chmod +x $v/bin/*; done
for f in arms/*/bin/*.xz; do xz -d $f; done; chmod +x arms/*/bin/*
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT arms/*/COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
OUT=$R/bundle/out timeout 220 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
cp out/goals.md $D/ 2>/dev/null; tail -n 16 $D/w/tier.log > $D/tier-tail.txt
tar -czf $D/w/tier-logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
BENCH_ONLY="attn_" timeout 90 python3 tools/perf_compare.py ab --base arms/main \
  --change arms/conv3 --repeats 5 --benches bench_dense,bench_kpool --out $D/w/perf-conv3 > $D/w/perf-conv3.log 2>&1; st "perf gate main->conv3" $?
BENCH_ONLY="attn_" timeout 90 python3 tools/perf_compare.py ab --base arms/conv3 \
  --change arms/qprep --repeats 5 --benches bench_dense,bench_kpool --out $D/w/perf-qprep > $D/w/perf-qprep.log 2>&1; st "perf gate conv3->qprep" $?
BENCH_ONLY="attn_" timeout 90 python3 tools/perf_compare.py ab --base arms/qprep \
  --change arms/pdl --repeats 5 --benches bench_dense,bench_kpool --out $D/w/perf-pdl > $D/w/perf-pdl.log 2>&1; st "perf gate qprep->pdl" $?
FW='*/@(*wgmma*|combine_forms*)'
FS='*/@(partial_heads__wgmma|glm5_decode__wgmma|gathered__wgmma|twin_exact__wgmma_verify|one_chunk_13_heads__wgmma|heads96__wgmma|glm5_decode_odd__wgmma)'
for v in conv3 pdl; do
  timeout 60 $v/bin/tc_attn_gpu_test --jobs 8 --filter "$FW" > $D/w/$v-tc.log 2>&1; st "$v tc_attn_gpu_test (wgmma, combine_forms)" $?
  timeout 40 $v/bin/attn_shake_gpu_test --jobs 8 > $D/w/$v-shake.log 2>&1; st "$v attn_shake_gpu_test" $?
done
for v in conv3 qprep pdl; do
  b=bin; [ $v != qprep ] && b=$v/bin
  for tool in memcheck racecheck synccheck; do
    timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 $b/tc_attn_gpu_test --jobs 7 --filter "$FS" > $D/w/$v-$tool.log 2>&1; st "$v $tool" $?
  done
done
for v in main conv3 qprep; do
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 30 ncu --cache-control none --clock-control none \
    --kernel-name regex:"attn_tc_wg|attn_wg_qprep|attn_combine" --launch-skip 6 --launch-count 3 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum \
    arms/$v/bin/bench_dense > $D/w/ncu-$v.txt 2>&1; st "ncu $v" $?
done
LEFT=$((575 - SECONDS + T0))
if [ $LEFT -gt 120 ]; then
  tar -xJf relink.tar.xz
  timeout $LEFT python3 tools/mutate.py run --bundle . --ids e89fd74d1a \
    --checks '^tc_attn_gpu_test --filter' --jobs 1 --timeout $((LEFT - 20)) --deadline $((LEFT - 10)) --grace 8 \
    --out $D/w/mutate > $D/w/mutate.log 2>&1; st "mutate e89fd74d1a" $?
else st "mutate skipped (time)" 0; fi
cd $D/w
tail -n 3 tier.log; cat goals.md 2>/dev/null | head -40
grep -E "Synthesis" *-tc.log *-shake.log; grep -E "FAIL" *-tc.log | head -5
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Synthesis" *-memcheck.log *-racecheck.log *-synccheck.log
for g in conv3 qprep pdl; do echo "== perf $g"; grep -E "^\| bench" perf-$g/perf-compare.md 2>/dev/null | grep -E "wgmma" | cut -d'|' -f3-10; tail -n 1 perf-$g.log; done
for v in main conv3 qprep; do echo "== $v"; grep -E "attn_tc_wg|attn_wg_qprep|attn_combine|gpu__time|dram__b" ncu-$v.txt | sed 's/  */ /g' | cut -c1-90 | head -14; done
grep -E "^\*\*Total|^\| e89" mutate/mutation-report.md 2>/dev/null | cut -c1-240; tail -n 2 mutate.log 2>/dev/null
cat steps.txt
cd $D && tar -czf w.tar.gz w; for g in conv3 qprep pdl; do cp w/perf-$g/perf-compare.md perf-$g.md 2>/dev/null; done; cp w/mutate/mutation-report.md . 2>/dev/null; rm -rf w
