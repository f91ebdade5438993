#!/bin/bash
# Twenty-eighth session, call 3 (call 2 never started: machine starts failed). The bundle of
# ecfc459 (the wgmma door arm with the causal stage as one bulk copy and the converter's mask
# read once a stage) and, in bundle/var, 7db38cc's bench_dense (the mask fix alone) and the
# prototype, for an A/B in the same run:
#  1. bench_dense of 7db38cc (A) and the prototype's table;
#  2. the GPU tier, tests and benchmarks (--parallel --bench; B is its bench_dense): every fixture
#     case of the new attn_*_tcwgmma checks, tc_attn_gpu_test, attn_shake, the model test, the
#     twenty-fifth and twenty-sixth sessions' cases that never ran, and the goals table;
#  3. compute-sanitizer (memcheck, racecheck, initcheck, synccheck) on the case sets that reach
#     the wgmma arm (the sanitizer tier's filters for these binaries, tools/sanitize_set.tsv; for
#     kpool_gpu_goldens_test only its attn_gathered_tcwgmma cases), 8 at a time.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
xz -d var/*.xz
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
chmod +x var/*
timeout 40 var/bench_dense_a > $D/w/bench-dense-a.md 2> $D/w/bench-dense-a.err; st "bench_dense A (7db38cc)" $?
timeout 40 var/probe_door_wgmma --rounds 3 > $D/w/probe-wgmma.md 2>&1; st probe_door_wgmma $?
OUT=$R/bundle/out timeout 300 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
cp out/goals.md $D/ 2>/dev/null; tail -n 16 $D/w/tier.log > $D/tier-tail.txt
SAN=/usr/local/cuda/bin/compute-sanitizer
mkdir -p $D/w/san
{
  f=$(awk -F'\t' '$1=="tc_attn_gpu_test"{print $2}' tools/sanitize_set.tsv)
  for tool in memcheck racecheck initcheck synccheck; do
    echo "$tool tc_attn_gpu_test $f"
    echo "$tool dense_gpu_goldens_test */san_*__attn_absorbed_tcwgmma"
    echo "$tool kpool_gpu_goldens_test */san_*__attn_gathered_tcwgmma"
    echo "$tool attn_shake_gpu_test */*"
    echo "$tool wgmma_model_gpu_test */@(fragment_layout_is_exact__*|subnormal_operands__*)"
  done
} > $D/w/san/jobs.txt
run_san() {
  tool=$1; bin=$2; flt=$3
  timeout 170 $SAN --tool $tool --error-exitcode 1 --target-processes all bin/$bin --jobs 1 --filter "$flt" > $D/w/san/$tool-$bin.log 2>&1
  echo "$tool $bin rc=$? $(grep -E 'Synthesis' $D/w/san/$tool-$bin.log | tail -n 1 | cut -c1-80) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $D/w/san/$tool-$bin.log | tail -n 1)"
}
export -f run_san; export SAN D
timeout 180 xargs -P 8 -L 1 bash -c 'run_san "$0" "$1" "$2"' < $D/w/san/jobs.txt > $D/w/san/summary.txt 2>&1; st "sanitizer subset" $?
tar -czf $D/w/logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
cd $D/w
echo "== A (7db38cc: mask fix)"; grep -E "attn_absorbed" bench-dense-a.md | grep -E "wgmma|tf32" | cut -c1-100
echo "== B (ecfc459, the tier's bench)"; python3 -c "
import json
for r in json.load(open('bench-dense.json')):
    if r['kernel'] in ('attn_absorbed',) and ('wgmma' in r['arm'] or 'tf32' in r['arm'] or 'bf16' in r['arm']): print(r['shape'], r['arm'], round(r['median_us'], 2))
" 2>&1 | head -24
head -n 8 probe-wgmma.md
tail -n 16 tier.log
head -n 30 goals.md 2>/dev/null
sort san/summary.txt
cat steps.txt
cd $D && tar -czf w.tar.gz w && cp w/steps.txt w/goals.md w/san/summary.txt . 2>/dev/null; rm -rf w
