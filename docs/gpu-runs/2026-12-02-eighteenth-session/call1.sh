#!/bin/bash
# eighteenth session, call 1: the combine as a programmatic dependent of the walk (ab/*_pdl)
# against HEAD (bin/): interleaved bench rows (out_sha256 compared), the attention tests and
# sanitizers on the PDL build, and ncu counters with stall reasons for the default walk, the door
# and the combine at decode 32K (the seventeenth session's unrun call 5)
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
  for v in base pdl; do
    MLA_BENCH_JSON=$W/bd-$v-$r.json timeout 100 ab/bench_dense_$v 50 > $W/bd-$v-$r.txt 2>&1
    echo "bench_dense $v $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
    MLA_BENCH_JSON=$W/bk-$v-$r.json timeout 100 ab/bench_kpool_$v > $W/bk-$v-$r.txt 2>&1
    echo "bench_kpool $v $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
  done
done
M=gpu__time_duration.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.sum,lts__t_bytes.sum.per_second,smsp__cycles_active.avg,smsp__warps_active.avg.per_cycle_active,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,smsp__warp_issue_stalled_not_selected_per_warp_active.pct,smsp__warp_issue_stalled_selected_per_warp_active.pct,smsp__warp_issue_stalled_dispatch_stall_per_warp_active.pct,smsp__warp_issue_stalled_tex_throttle_per_warp_active.pct
BENCH_ONLY="attn_absorbed decode " timeout 150 ncu --clock-control none --kernel-name regex:attn_walk_f32 --launch-skip 2 --launch-count 1 --metrics $M ab/bench_dense_pdl 20 > $W/ncu-default.txt 2>&1
echo "ncu default rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
BENCH_ONLY="attn_absorbed decode TC door: tf32" timeout 150 ncu --clock-control none --cache-control none --kernel-name regex:"attn_tc_f32|attn_combine_f32" --launch-skip 4 --launch-count 2 --metrics $M ab/bench_dense_pdl 20 > $W/ncu-door.txt 2>&1
echo "ncu door rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
# the PDL build's attention tests and sanitizers, four at a time
(timeout 200 ab/tc_attn_gpu_test_pdl > $W/tc_attn.txt 2>&1; echo "tc_attn rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 ab/dense_gpu_goldens_test_pdl --jobs 4 > $W/dense_gold.txt 2>&1; echo "dense_gold rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 ab/kpool_gpu_goldens_test_pdl --jobs 4 > $W/kpool_gold.txt 2>&1; echo "kpool_gold rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 200 ab/attn_shake_gpu_test_pdl > $W/shake.txt 2>&1; echo "attn_shake rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
wait
(timeout 200 ab/tc_prefill_gpu_test_pdl > $W/tc_prefill.txt 2>&1; echo "tc_prefill rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 200 ab/decode_split_gpu_test_pdl > $W/decode_split.txt 2>&1; echo "decode_split rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
for tool in racecheck memcheck synccheck; do
(timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 ab/dense_gpu_goldens_test_pdl --jobs 1 --filter='*/@(san_*|bad_arguments_write_nothing)' > $W/san-$tool-dense.txt 2>&1; echo "$tool dense rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
done
wait
(timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 ab/tc_attn_gpu_test_pdl --jobs 1 --filter='*/@(partial_heads__*|declines_uncovered|bad_arguments|low_payload_nan__*|inf_rope__*|cache_4byte_aligned__*|q_4byte_aligned__*)' > $W/san-racecheck-tc.txt 2>&1; echo "racecheck tc rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 ab/tc_attn_gpu_test_pdl --jobs 1 --filter='*/@(partial_heads__*|declines_uncovered|bad_arguments|low_payload_nan__*|inf_rope__*|cache_4byte_aligned__*|q_4byte_aligned__*)' > $W/san-memcheck-tc.txt 2>&1; echo "memcheck tc rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 ab/kpool_gpu_goldens_test_pdl --jobs 1 --filter='*/san_*' > $W/san-memcheck-kpool.txt 2>&1; echo "memcheck kpool rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
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
print('%-58s %-22s %-22s %s'%('row','base','pdl','bytes'))
for k in keys:
    b=rows.get((k,'base'),[]); p=rows.get((k,'pdl'),[])
    same='same' if sha.get((k,'base'))==sha.get((k,'pdl')) and None not in sha.get((k,'base'),{None}) else ('n/a' if None in sha.get((k,'base'),{None}) else 'DIFFER')
    print('%-58s %-22s %-22s %s %s'%(' | '.join(k)[:58],' '.join('%.1f'%x for x in b),' '.join('%.1f'%x for x in p),same,
          ('%.3f'%(statistics.median(p)/statistics.median(b)) if b and p else '')))
n=sum(1 for k,v in sha if v=='base'); d=sum(1 for (k,v) in sha if v=='base' and sha[(k,v)]!=sha.get((k,'pdl')))
print('rows', n, 'with differing out_sha256:', d)
PY
for f in ncu-*.txt; do echo "== $f"; awk '/^  [a-zA-Z_<]/{k=$1} /__/{print substr(k,1,24), $1, $NF}' $f | head -60; done
for f in tc_attn dense_gold kpool_gold shake tc_prefill decode_split; do echo "$f: $(grep -E 'Synthesis' $f.txt)"; done
for f in san-*.txt; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f | tail -1) $(grep -E 'Synthesis' $f)"; done
cat steps.txt
cd $D && tar -czf /tmp/call1.tar.gz -C w . && rm -rf $D/w && mv /tmp/call1.tar.gz $D/
