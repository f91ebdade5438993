#!/bin/bash
# Thirty-fifth session, call A: two door candidates against main in one call.
# (1) branch wgmma-bf16-partials (this bundle, ec5d033): the wgmma door's split walk stores its
#     partials as bf16 (half of the 16.8 MB at decode 32K), the combine's bf16 form widens them;
#     the class gains part_rel = 2^-8 (derived, docs/tolerances.md). Its whole GPU tier with
#     benchmarks and goals (slot_symmetry__<arm>, written last session, runs here for the first
#     time), memcheck / racecheck on the wgmma and combine cases.
# (2) branch combine-tma (17cb538; tma/tcbin.tar.xz: its tc_attn_gpu_test): the bulk combine's
#     rows by 3-D tensor copies; its tc_attn_gpu_test and memcheck / racecheck / synccheck on the
#     combine cases.
# (3) branch tma-bf16p (1e35b71; tb/tcbin.tar.xz): both together, the bulk combine reading bf16
#     through a BFLOAT16 tensor map; its tc_attn_gpu_test and memcheck on the combine cases.
# Then the perf gate main -> bf16p, main -> tma and main -> tb on every attention row, and ncu of
# the combines.
# Expected (written before): bf16p: every wgmma case in its class, twin_exact__wgmma_* bit-exact
# (the twin rounds each partial), the other arms' bytes unchanged; the walk 2-2.5 us shorter at
# decode 32K (the prototype's stores: 4.80 us for 16.8 MB), the combine 6.7 -> 5.5-6.5 us (bound
# by instructions; the same loads half as wide, fewer registers): door 32K 49.2 -> 46-47 us (H100).
# tma: every out_sha256 identical to main; the combine 6.7 -> 2.5-3.5 us; door rows 3-4 us faster.
# tb: the two gains added: the combine 1.5-2.5 us, door 32K about 42-44 us (H100).
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
mkdir -p tma && tar -C tma -xJf tma/tcbin.tar.xz
mkdir -p tb && tar -C tb -xJf tb/tcbin.tar.xz
for f in arms/*/bin/*.xz; do xz -d $f; done; chmod +x arms/*/bin/*
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT arms/*/COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
OUT=$R/bundle/out timeout 280 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st "bf16p tier" $?
cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
cp out/goals.md $D/ 2>/dev/null; tail -n 16 $D/w/tier.log > $D/tier-tail.txt
tar -czf $D/w/tier-logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
BENCH_ONLY="attn_" timeout 100 python3 tools/perf_compare.py ab --base arms/main \
  --change arms/bf16p --repeats 6 --benches bench_dense --out $D/w/perf-bf16p > $D/w/perf-bf16p.log 2>&1; st "perf gate bf16p" $?
BENCH_ONLY="attn_" timeout 100 python3 tools/perf_compare.py ab --base arms/main \
  --change arms/tma --repeats 6 --benches bench_dense --out $D/w/perf-tma > $D/w/perf-tma.log 2>&1; st "perf gate tma" $?
BENCH_ONLY="attn_" timeout 100 python3 tools/perf_compare.py ab --base arms/main \
  --change arms/tb --repeats 6 --benches bench_dense --out $D/w/perf-tb > $D/w/perf-tb.log 2>&1; st "perf gate tb" $?
timeout 90 tma/bin/tc_attn_gpu_test --jobs 6 > $D/w/tma-tc.log 2>&1; st "tma tc_attn_gpu_test" $?
timeout 90 tb/bin/tc_attn_gpu_test --jobs 6 > $D/w/tb-tc.log 2>&1; st "tb tc_attn_gpu_test" $?
FB='*/@(glm5_decode__wgmma|glm5_verify__wgmma|partial_heads__wgmma|gathered__wgmma|combine_forms__wgmma|twin_exact__wgmma_verify|one_chunk_5_heads__wgmma)'
FT='*/@(combine_forms*|glm5_decode__bf16|partial_heads__wgmma|one_chunk_5_heads__wgmma)'
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 bin/tc_attn_gpu_test --jobs 6 --filter "$FB" > $D/w/bf16p-memcheck.log 2>&1; st "bf16p memcheck" $?
timeout 45 compute-sanitizer --tool memcheck --error-exitcode 9 tb/bin/tc_attn_gpu_test --jobs 6 --filter "$FT" > $D/w/tb-memcheck.log 2>&1; st "tb memcheck" $?
timeout 45 compute-sanitizer --tool racecheck --error-exitcode 9 tb/bin/tc_attn_gpu_test --jobs 6 --filter "$FT" > $D/w/tb-racecheck.log 2>&1; st "tb racecheck" $?
timeout 45 compute-sanitizer --tool memcheck --error-exitcode 9 tma/bin/tc_attn_gpu_test --jobs 6 --filter "$FT" > $D/w/tma-memcheck.log 2>&1; st "tma memcheck" $?
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 bin/tc_attn_gpu_test --jobs 6 --filter "$FB" > $D/w/bf16p-racecheck.log 2>&1; st "bf16p racecheck" $?
for v in main bf16p tma tb; do
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 30 ncu --cache-control none --clock-control none \
    --kernel-name regex:"attn_combine" --launch-skip 2 --launch-count 1 --section SpeedOfLight \
    --section WarpStateStats --section Occupancy --section LaunchStats \
    --section MemoryWorkloadAnalysis arms/$v/bin/bench_dense > $D/w/ncu-combine-$v.txt 2>&1; st "ncu combine $v" $?
done
cd $D/w
tail -n 3 tier.log; cat goals.md 2>/dev/null
grep -E "Synthesis" tma-tc.log tb-tc.log
grep -E "Synthesis|ERROR SUMMARY|RACECHECK SUMMARY" bf16p-*.log tma-*check.log tb-*check.log | head -20
for g in bf16p tma tb; do echo "== perf $g"; cat perf-$g/perf-compare.md 2>/dev/null | grep -E "^\| bench_dense|perf_compare:" | cut -d'|' -f3-10; tail -n 1 perf-$g.log; done
for v in main bf16p tma tb; do echo "== $v"; grep -E "attn_combine|Duration|L2 Cache Throughput|Registers Per|Achieved Occupancy" ncu-combine-$v.txt | head -6; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/perf-bf16p/perf-compare.md perf-bf16p.md 2>/dev/null; cp w/perf-tma/perf-compare.md perf-tma.md 2>/dev/null; cp w/perf-tb/perf-compare.md perf-tb.md 2>/dev/null; rm -rf w
