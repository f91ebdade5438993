#!/bin/bash
# seventeenth session, call 3: the door without its write-back (P . V converts its c_kv elements:
# ab/*_nowbnan with at_tf32_hi, ab/*_nowbadd with the add alone), against the tree (ab/*_base):
# interleaved bench rows (out_sha256 compared), the door's tests, sanitizers, ncu counters
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
for r in 1 2 3; do
  for v in base nowbnan nowbadd; do
    BENCH_ONLY="TC door: tf32" MLA_BENCH_JSON=$W/at-$v-$r.json timeout 100 ab/bench_dense_$v 50 > $W/at-$v-$r.txt 2>&1
    echo "bench $v $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
  done
done
for v in base nowbadd; do
  BENCH_ONLY="attn_absorbed decode TC door: tf32" timeout 120 ncu --clock-control none --kernel-name regex:attn_tc_f32 --launch-skip 3 --launch-count 1 --metrics gpu__time_duration.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__inst_executed.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum ab/bench_dense_$v 5 > $W/ncu-$v.txt 2>&1
  echo "ncu $v rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
done
for v in nowbadd nowbnan; do
(timeout 200 ab/tc_attn_gpu_test_$v > $W/tc_attn-$v.txt 2>&1; echo "tc_attn $v rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
done
(timeout 250 ab/dense_gpu_goldens_test_nowbadd --filter='*/*attn_absorbed_tc*' > $W/dense_gold.txt 2>&1; echo "dense_gold rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 ab/kpool_gpu_goldens_test_nowbadd --filter='*/*attn_gathered_tc*' > $W/kpool_gold.txt 2>&1; echo "kpool_gold rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 compute-sanitizer --tool racecheck --error-exitcode 9 ab/tc_attn_gpu_test_nowbadd --jobs 1 --filter='*/@(partial_heads__*|declines_uncovered|bad_arguments|low_payload_nan__*|inf_rope__*|cache_4byte_aligned__*|q_4byte_aligned__*)' > $W/san-race.txt 2>&1; echo "racecheck rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 compute-sanitizer --tool memcheck --error-exitcode 9 ab/tc_attn_gpu_test_nowbadd --jobs 1 --filter='*/@(partial_heads__*|declines_uncovered|bad_arguments|low_payload_nan__*|inf_rope__*|cache_4byte_aligned__*|q_4byte_aligned__*)' > $W/san-mem.txt 2>&1; echo "memcheck rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
wait
cd $W
python3 - <<'PY'
import json,glob,collections
rows=collections.defaultdict(list); sha={}
for f in sorted(glob.glob('at-*-*.json')):
    v=f.split('-')[1]
    d=json.load(open(f)); d=d['rows'] if isinstance(d,dict) else d
    for r in d:
        k=(r['kernel'],r['shape'],r['arm'])
        rows[(k,v)].append(r['median_us']); sha.setdefault((k,v),set()).add(r.get('out_sha256'))
keys=sorted({k for k,v in rows})
for k in keys:
    line='%-44s'%(' '.join(k)[:44])
    for v in ('base','nowbnan','nowbadd'):
        line+=' %s %-18s'%(v, ' '.join('%.1f'%x for x in rows.get((k,v),[])))
    line+=' bytes '+('same' if sha.get((k,'base'))==sha.get((k,'nowbnan'))==sha.get((k,'nowbadd')) else 'DIFFER')
    print(line)
PY
for f in ncu-*.txt; do echo "== $f"; grep -E "gpu__time|wavefronts|inst_executed.sum|throughput|tensor|issue_active|bank" $f | awk '{print $1, $(NF-1), $NF}'; done
for f in tc_attn-nowbadd tc_attn-nowbnan dense_gold kpool_gold; do echo "$f: $(grep -E 'Synthesis' $f.txt)"; done
for f in san-race san-mem; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f.txt | tail -1)"; done
cat steps.txt
cd $D && tar -czf /tmp/call3.tar.gz -C w . && rm -rf $D/w && mv /tmp/call3.tar.gz $D/
