#!/bin/bash
# Thirty-sixth session, call 2: the wgmma door's column pairs (branch wgmma-pair; bundle built from
# it) - its whole GPU tier with benchmarks and goals, a perf gate against main (arms/main: main
# 8e2132d's bench binaries), memcheck / racecheck on the paired cases, and ncu's DRAM / L2
# counters of the walk and the combine at decode 32K in both arms.
# Expected (written before): the tier passes whole (830 + the 4 new pairs_* cases; twin_exact
# decode 32K bit-exact: the twin takes the arm's new plan); at decode 32K the door 45.6 -> about
# 43 us (the partials' stores halved: about -1.2 us; the combine over 64 chunks instead of 128:
# 5.8 -> about 4.2 us), the walk's DRAM reads unchanged (75.7 MB: the second block of a pair
# reads its rows from L2), its L2-to-SM read sectors about twice main's; the risk: the walk
# slower if the SMs' L2 reads or the duplicated conversions bind. Verify and prefill unchanged
# (not paired: t_q > 1); decode 8K and 128K paired (64 and 66 chunks).
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
cat COMMIT arms/*/COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
OUT=$R/bundle/out timeout 230 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
cp out/goals.md $D/ 2>/dev/null; tail -n 16 $D/w/tier.log > $D/tier-tail.txt
tar -czf $D/w/tier-logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
BENCH_ONLY="attn_" timeout 100 python3 tools/perf_compare.py ab --base arms/main \
  --change arms/pair --repeats 6 --benches bench_dense,bench_kpool --out $D/w/perf-pair > $D/w/perf-pair.log 2>&1; st "perf gate main->pair" $?
FS='*/@(pairs_*|glm5_decode__wgmma|glm5_decode_odd__wgmma|twin_exact__wgmma_decode_32k)'
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 bin/tc_attn_gpu_test --jobs 6 --filter "$FS" > $D/w/pair-memcheck.log 2>&1; st "pair memcheck" $?
timeout 90 compute-sanitizer --tool racecheck --error-exitcode 9 bin/tc_attn_gpu_test --jobs 6 --filter "$FS" > $D/w/pair-racecheck.log 2>&1; st "pair racecheck" $?
for v in main pair; do
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 40 ncu --cache-control none --clock-control none \
    --kernel-name regex:"attn_tc_wg|attn_combine" --launch-skip 4 --launch-count 2 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum \
    arms/$v/bin/bench_dense > $D/w/ncu-$v.txt 2>&1; st "ncu $v" $?
done
cd $D/w
tail -n 3 tier.log; cat goals.md 2>/dev/null | head -4 | tail -2
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Synthesis" pair-memcheck.log pair-racecheck.log
echo "== perf"; cat perf-pair/perf-compare.md 2>/dev/null | grep -E "^\| bench" | grep -E "wgmma" | cut -d'|' -f3-10; tail -n 2 perf-pair.log
for v in main pair; do echo "== $v"; grep -E "attn_tc_wg|attn_combine|gpu__time|dram__bytes|lts__|sm__thr|inst_executed" ncu-$v.txt | sed 's/  */ /g' | head -26; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/perf-pair/perf-compare.md perf-pair.md 2>/dev/null; rm -rf w
