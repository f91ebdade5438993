#!/bin/bash
# eighteenth session, call 3: the door's tiles by bulk copies on mbarriers, with the combine's loads
# all in flight (ab/*_tma), against HEAD (bin/): interleaved bench rows (out_sha256 compared), ncu
# counters and the SASS stall profile of the new door, the attention tests, the sanitizers on the
# door's and the suites' sanitizer cases, and 60 s of gathered_indices fuzzing (it reaches both TC
# arms)
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
rm -rf ab; tar -xJf ab.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w; W=$D/w
cat COMMIT > $W/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $W/steps.txt
for t in bench_dense bench_kpool; do cp bin/$t ab/${t}_base; done
for r in 1 2 3; do
  for v in base tma; do
    MLA_BENCH_JSON=$W/bd-$v-$r.json timeout 100 ab/bench_dense_$v 50 > $W/bd-$v-$r.txt 2>&1
    echo "bench_dense $v $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
    MLA_BENCH_JSON=$W/bk-$v-$r.json timeout 100 ab/bench_kpool_$v > $W/bk-$v-$r.txt 2>&1
    echo "bench_kpool $v $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
  done
done
M=gpu__time_duration.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__cycles_active.avg,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,smsp__warp_issue_stalled_selected_per_warp_active.pct
for v in base tma; do
  BENCH_ONLY="attn_absorbed decode TC door: tf32" timeout 100 ncu --clock-control none --cache-control none --kernel-name regex:"attn_tc_f32|attn_combine_f32" --launch-skip 4 --launch-count 2 --metrics $M ab/bench_dense_$v 20 > $W/ncu-$v.txt 2>&1
  echo "ncu $v rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
done
BENCH_ONLY="attn_absorbed decode TC door: tf32" timeout 150 ncu --clock-control none --kernel-name regex:attn_tc_f32 --launch-skip 4 --launch-count 1 --section SourceCounters --section WarpStateStats -f -o $W/door-tma ab/bench_dense_tma 20 > $W/ncu-src.txt 2>&1
timeout 100 ncu -i $W/door-tma.ncu-rep --page source --csv --print-source sass > $W/door-tma-sass.csv 2> $W/door-sass.err
echo "ncu src rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
rm -f $W/door-tma.ncu-rep
SF='*/@(partial_heads__*|declines_uncovered|bad_arguments|low_payload_nan__*|inf_rope__*|cache_4byte_aligned__*|q_4byte_aligned__*)'
(timeout 200 ab/tc_attn_gpu_test_tma > $W/tc_attn.txt 2>&1; echo "tc_attn rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 280 ab/dense_gpu_goldens_test_tma --jobs 4 > $W/dense_gold.txt 2>&1; echo "dense_gold rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 ab/kpool_gpu_goldens_test_tma --jobs 4 > $W/kpool_gold.txt 2>&1; echo "kpool_gold rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 200 ab/attn_shake_gpu_test_tma > $W/shake.txt 2>&1; echo "attn_shake rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
for tool in racecheck memcheck synccheck; do
(timeout 250 compute-sanitizer --tool $tool --error-exitcode 9 ab/tc_attn_gpu_test_tma --jobs 1 --filter="$SF" > $W/san-$tool-tc.txt 2>&1; echo "$tool tc rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
done
wait
for tool in racecheck memcheck; do
(timeout 250 compute-sanitizer --tool $tool --error-exitcode 9 ab/kpool_gpu_goldens_test_tma --jobs 1 --filter='*/san_*' > $W/san-$tool-kpool.txt 2>&1; echo "$tool kpool rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
done
(timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 ab/attn_shake_gpu_test_tma > $W/san-racecheck-shake.txt 2>&1; echo "racecheck shake rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(mkdir -p $W/fz/corpus $W/fz/repro && cp -r ../fuzz/corpus/gathered_indices/. $W/fz/corpus/ && cd $W/fz && ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 FUZZ_REPRO_DIR=$W/fz/repro timeout 120 $R/bundle/ab/gathered_indices_fuzzer_tma -max_len=256 -jobs=6 -workers=6 -max_total_time=60 -print_final_stats=1 -artifact_prefix=$W/fz/repro/ corpus > $W/fuzz.txt 2>&1; echo "fuzz gathered rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
wait
cd $W
python3 - <<'PY'
import json,glob,collections,statistics
rows=collections.defaultdict(list); sha={}
for f in sorted(glob.glob('b?-*-*.json')):
    v=f.split('-')[1]
    d=json.load(open(f)); d=d['rows'] if isinstance(d,dict) else d
    for r in d:
        k=(r['kernel'],r['shape'],r['arm'])
        rows[(k,v)].append(r['median_us']); sha.setdefault((k,v),set()).add(r.get('out_sha256'))
keys=sorted({k for k,v in rows if k[0].startswith('attn')})
for k in keys:
    b=rows.get((k,'base'),[]); p=rows.get((k,'tma'),[])
    print('%-52s %-22s %-22s %s'%(' | '.join(k)[:52],' '.join('%.1f'%x for x in b),' '.join('%.1f'%x for x in p),
          ('%.3f'%(statistics.median(p)/statistics.median(b)) if b and p else '')))
allk={k for k,v in sha}
d=[k for k in allk if sha.get((k,'base'))!=sha.get((k,'tma'))]
print('rows', len(allk), 'with differing out_sha256:', len(d), d[:5])
PY
for f in ncu-base.txt ncu-tma.txt; do echo "== $f"; awk '/^  [a-zA-Z_<]/{k=$1} /__/{print substr(k,1,18), $1, $NF}' $f | head -34; done
for f in tc_attn dense_gold kpool_gold shake; do echo "$f: $(grep -E 'Synthesis' $f.txt)"; done
for f in san-*.txt; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f | tail -1) $(grep -E 'Synthesis' $f)"; done
grep -hE "stat::number_of_executed_units|ERROR|FUZZ_ASSERT" fz/fuzz-*.log 2>/dev/null | sort | uniq -c | head; ls fz/repro | head
cat steps.txt
cd $D && tar -czf /tmp/call3.tar.gz -C w . && rm -rf $D/w && mv /tmp/call3.tar.gz $D/
