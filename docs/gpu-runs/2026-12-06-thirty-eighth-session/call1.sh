#!/bin/bash
# For the next session (written in the thirty-seventh; not run): branch qprep-main (492078c on main
# af04314) - q prepared once in bf16 by attn_wg_qprep spread over 4 blocks a tile, copied into each
# walk block by one bulk copy after its first tile's stages, the walk launched as the preparation's
# programmatic dependent where it is one wave (blocks <= SMs), main's conversions (warpgroup 1)
# unchanged; q's tiles ahead of the partials in the workspace, so (m, l, flags) stay last (a
# stray write past them still leaves the shake build's exact allocation). First main's whole GPU
# tier with benchmarks and goals (5490aeb's binaries: main since then changed docs and the
# mutation ledger only), then the branch's (a merge candidate: if it
# passes and is faster, this is the tier of the main it becomes), so that whichever is kept has its
# tier from this call, on whatever card comes (an H200 would make it the done-run); then
# the perf gate main -> qmain, memcheck / racecheck / synccheck on 7 wgmma cases, ncu of the walk,
# the preparation and the combine at decode 32K in both arms, and last the bf16 door's 2 mutants
# still owed memcheck (attn_tc_bf16 is main's in this bundle: the ids are the same). Also ncu of
# two pipeline probes of main's walk (branch wg-probes 8bb1a95, --define=mla_probe=..., wrong
# outputs by design): probe-stream (each f32 stage released as it lands: q's load and the
# producer's stream alone) and probe-convert (each tile converted as now and released at once:
# no logits, softmax or P . V).
# Assembled in .gpu/next/bundle (cp -r it to bundle/; run "bash bundle/call.sh", carry bundle):
# the branch's bundle with relink.tar.xz, main/ (main 5490aeb's bin.tar.xz; the rest of its bundle
# is the branch's: the same run-gpu-tier.sh, corpora, fixtures and libraries); arms main (3827be0: main's device code and bench), qmain
# (492078c), probe-stream and probe-convert (8bb1a95 with the define; bench_dense only, under
# ncu). With the tree (36.1 MB at f07254f) the carry is about 60 MiB of the 64: if the tree has
# grown past it, leave out relink.tar.xz (the mutant step then finds none and fails alone).
# Why (the thirty-seventh session's call 1, H100): q in bf16 took 1.7 us off the walk (40.83 ->
# 39.17 by ncu, on conv3), but its one-block preparation cost 7.6 us on the stream; a dependent
# launch hid 4.8 us of it, and lost 12% at gathered t_q 512 (several waves).
# Expected (written before): both tiers 834 / 0 / 34 (main's door row 45-46 us on an H100, about
# 33-34 on an H200 by the read floors' ratio); bytes identical to main on every row; the walk
# about 1.7 us shorter (39.97 -> about 38.3 by ncu), the preparation (4 blocks, 9 float4 loads a
# thread) about 2-3 us and mostly hidden behind the first tile: decode 32K 45.4 -> 43.5-44.5 us,
# the same at 8K, 128K, verify and gathered t_q 1 (one wave each); prefill unchanged (one chunk:
# no preparation); gathered t_q 512 within noise (several waves: no dependent launch; qprep's
# own t_q 512 row was 1.002x). A miss says the first tile's stages do not cover the preparation.
# The probes (written before): probe-stream 27-31 us (590 KB an SM at the DRAM's fair share, about
# 21 GB/s, plus the ramp), probe-convert 30-34, main's walk 40. Reading: probe-stream >= 36 puts
# the bound in the producer and its ring; probe-convert - probe-stream >= 5 in the conversion and
# its two bf16 buffers; walk - probe-convert >= 6 in warpgroup 0's chain (logits, softmax, P . V
# a tile, not overlapped with the next tile's intake). Each names the next lever's size.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
for f in arms/*/bin/*.xz; do xz -d $f; done; chmod +x arms/*/bin/*
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT main/COMMIT arms/*/COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
(cd main && mkdir -p out && tar -xJf bin.tar.xz && tar -C out -xJf ../lib.tar.xz && ln -sfn ../../golden golden &&
  for x in fuzz tools regressions docs known_failures.txt; do ln -sfn ../$x $x; done && cp ../run-gpu-tier.sh . &&
  OUT=$R/bundle/main/out timeout 220 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/main-tier.log 2>&1); st "main tier" $?
mkdir -p $D/w/main; cp main/out/goals.md main/out/bench-*.json main/out/peer-torch.json main/out/summary-gpu.json $D/w/main/ 2>/dev/null
cp main/out/goals.md $D/main-goals.md 2>/dev/null; tail -n 16 $D/w/main-tier.log > $D/main-tier-tail.txt
tar -czf $D/w/main-tier-logs.tar.gz main/out/logs main/out/*.log main/out/*.md 2>/dev/null
OUT=$R/bundle/out timeout 220 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st "qmain tier" $?
cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
cp out/goals.md $D/ 2>/dev/null; tail -n 16 $D/w/tier.log > $D/tier-tail.txt
tar -czf $D/w/tier-logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
BENCH_ONLY="attn_" timeout 100 python3 tools/perf_compare.py ab --base arms/main \
  --change arms/qmain --repeats 6 --benches bench_dense,bench_kpool --out $D/w/perf-qmain > $D/w/perf-qmain.log 2>&1; st "perf gate main->qmain" $?
FS='*/@(partial_heads__wgmma|glm5_decode__wgmma|gathered__wgmma|twin_exact__wgmma_verify|one_chunk_13_heads__wgmma|heads96__wgmma|glm5_decode_odd__wgmma)'
for tool in memcheck racecheck synccheck; do
  timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 bin/tc_attn_gpu_test --jobs 7 --filter "$FS" > $D/w/qmain-$tool.log 2>&1; st "qmain $tool" $?
done
for v in main qmain probe-stream probe-convert; do
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 30 ncu --cache-control none --clock-control none \
    --kernel-name regex:"attn_tc_wg|attn_wg_qprep|attn_combine" --launch-skip 6 --launch-count 3 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum \
    arms/$v/bin/bench_dense > $D/w/ncu-$v.txt 2>&1; st "ncu $v" $?
done
LEFT=$((575 - SECONDS + T0))
if [ $LEFT -gt 120 ]; then
  tar -xJf relink.tar.xz
  timeout $LEFT python3 tools/mutate.py run --bundle . --ids 7010478c0f,4d7a9f936d \
    --checks '^(racecheck|memcheck) tc_attn_gpu_test' --jobs 2 --sanitizer-timeout $((LEFT - 40)) \
    --deadline $((LEFT - 20)) --grace 10 --out $D/w/mutate > $D/w/mutate.log 2>&1; st "mutate 7010478c0f,4d7a9f936d" $?
else st "mutate skipped (time)" 0; fi
cd $D/w
tail -n 2 main-tier.log; cat main/goals.md 2>/dev/null | head -12
tail -n 2 tier.log; cat goals.md 2>/dev/null | head -12
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Synthesis" *-memcheck.log *-racecheck.log *-synccheck.log
echo "== perf qmain"; grep -E "^\| bench" perf-qmain/perf-compare.md 2>/dev/null | grep -E "wgmma" | cut -d'|' -f3-10; tail -n 1 perf-qmain.log
for v in main qmain probe-stream probe-convert; do echo "== $v"; grep -E "attn_tc_wg|attn_wg_qprep|attn_combine|gpu__time|dram__b" ncu-$v.txt | sed 's/  */ /g' | cut -c1-90 | head -14; done
grep -E "^\*\*Total|^- \`" mutate/mutation-report.md 2>/dev/null | cut -c1-240; tail -n 2 mutate.log 2>/dev/null
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/perf-qmain/perf-compare.md perf-qmain.md 2>/dev/null; cp w/mutate/mutation-report.md . 2>/dev/null; rm -rf w
