#!/bin/bash
# nineteenth session, call 3: the 3xtf32 arm with two accumulators a logit chunk (hi hi, and the
# two small passes) at HEAD: the same checks as call 1 (two bench_dense rounds, ncu of both walks
# at decode 32K, the attention tests and golden suites, the gathered fuzzer, the sanitizers)
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w; W=$D/w
cat COMMIT > $W/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $W/steps.txt
for r in 1 2; do
  MLA_BENCH_JSON=$W/bd-$r.json timeout 100 bin/bench_dense 50 > $W/bd-$r.txt 2>&1
  echo "bench_dense $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
done
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_pipe_alu.sum,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct,smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct,smsp__warp_issue_stalled_not_selected_per_warp_active.pct,smsp__warp_issue_stalled_selected_per_warp_active.pct,smsp__warp_issue_stalled_dispatch_stall_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct
BENCH_ONLY="attn_absorbed decode " timeout 150 ncu --clock-control none --kernel-name regex:attn_walk_f32 --launch-skip 2 --launch-count 1 --metrics $M bin/bench_dense 20 > $W/ncu-default.txt 2>&1
echo "ncu default rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
BENCH_ONLY="attn_absorbed decode TC door: 3xtf32" timeout 150 ncu --clock-control none --kernel-name regex:attn_walk_f32 --launch-skip 2 --launch-count 1 --metrics $M bin/bench_dense 20 > $W/ncu-3x.txt 2>&1
echo "ncu 3xtf32 rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
(timeout 250 bin/tc_attn_gpu_test --jobs 4 > $W/tc_attn.txt 2>&1; echo "tc_attn rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 bin/dense_gpu_goldens_test --jobs 4 > $W/dense_gold.txt 2>&1; echo "dense_gold rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 bin/kpool_gpu_goldens_test --jobs 4 > $W/kpool_gold.txt 2>&1; echo "kpool_gold rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 200 bin/tf32_mma_model_gpu_test > $W/mma_model.txt 2>&1; echo "mma_model rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
wait
(cd ../fuzz/corpus/gathered_indices && ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 timeout 120 $OLDPWD/bin/gathered_indices_fuzzer -max_total_time=60 -workers=6 -jobs=6 . > $W/fuzz-gathered.txt 2>&1; echo "fuzz gathered rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
for tool in memcheck racecheck synccheck; do
(timeout 250 compute-sanitizer --tool $tool --error-exitcode 9 bin/tc_attn_gpu_test --jobs 1 --filter='*/@(partial_heads__3xtf32|low_payload_nan__3xtf32|inf_rope_exact_q__3xtf32|ninf_latent_exact_q__3xtf32|integer_identity__3xtf32_gathered)' > $W/san-$tool-tc.txt 2>&1; echo "$tool tc rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
done
wait
cd $W
python3 - <<'PY'
import json,collections,statistics
rows=collections.defaultdict(list); sha=collections.defaultdict(set)
for r_ in (1,2):
    try: d=json.load(open(f'bd-{r_}.json'))
    except Exception as e: print('no json',r_,e); continue
    d=d['rows'] if isinstance(d,dict) else d
    for r in d:
        k=(r['kernel'],r['shape'],r['arm']); rows[k].append(r['median_us']); sha[k].add(r.get('out_sha256'))
for k in sorted(rows):
    if not k[0].startswith('attn'): continue
    print('%-60s %-20s %s'%(' | '.join(k)[:60],' '.join('%.1f'%x for x in rows[k]), 'run-to-run same' if len(sha[k])==1 else 'DIFF'))
PY
for f in ncu-*.txt; do echo "== $f"; awk '/^  [a-zA-Z_<]/{k=$1} /__/{print substr(k,1,24), $1, $NF}' $f | head -40; done
for f in tc_attn dense_gold kpool_gold mma_model; do echo "$f: $(grep -E 'Synthesis' $f.txt)"; done
grep -E "Done|ERROR|crash|stat::number_of_executed_units" fuzz-gathered.txt | tail -3
for f in san-*.txt; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f | tail -1) $(grep -E 'Synthesis' $f)"; done
grep -E "FAIL|fail" tc_attn.txt dense_gold.txt kpool_gold.txt | head -20
cat steps.txt
cd $D && tar -czf /tmp/call3.tar.gz -C w . && rm -rf $D/w && mv /tmp/call3.tar.gz $D/
