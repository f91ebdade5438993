#!/bin/bash
# seventeenth session, call 2: the door with 16 warps (two m-tile groups of 8, 128 registers, no
# write-back: P . V converts its c_kv elements), ab/*_w16, against the tree's door (ab/*_base):
# its tests and sanitizers, the gathered fuzzer, and interleaved bench rows (out_sha256 compared)
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
# bench first, on an otherwise idle GPU
for r in 1 2 3; do
  for v in base w16; do
    BENCH_ONLY="attn_absorbed" MLA_BENCH_JSON=$W/at-$v-$r.json timeout 100 ab/bench_dense_$v 50 > $W/at-$v-$r.txt 2>&1
    echo "bench $v $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
  done
done
for v in base w16; do
  MLA_BENCH_JSON=$W/kp-$v.json timeout 100 ab/bench_kpool_$v > $W/kp-$v.txt 2>&1; echo "kpool $v rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
done
# correctness of w16, in parallel
(timeout 200 ab/tc_attn_gpu_test_w16 > $W/tc_attn.txt 2>&1; echo "tc_attn rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 ab/dense_gpu_goldens_test_w16 --filter='*/*attn_absorbed_tc*' > $W/dense_gold.txt 2>&1; echo "dense_gold rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 ab/kpool_gpu_goldens_test_w16 --filter='*/*attn_gathered_tc*' > $W/kpool_gold.txt 2>&1; echo "kpool_gold rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 200 ab/decode_split_gpu_test_w16 > $W/decode_split.txt 2>&1; echo "decode_split rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 compute-sanitizer --tool racecheck --error-exitcode 9 ab/tc_attn_gpu_test_w16 --jobs 1 --filter='*/@(partial_heads__*|declines_uncovered|bad_arguments|low_payload_nan__*|inf_rope__*|cache_4byte_aligned__*|q_4byte_aligned__*)' > $W/san-race.txt 2>&1; echo "racecheck rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 compute-sanitizer --tool memcheck --error-exitcode 9 ab/tc_attn_gpu_test_w16 --jobs 1 --filter='*/@(partial_heads__*|declines_uncovered|bad_arguments|low_payload_nan__*|inf_rope__*|cache_4byte_aligned__*|q_4byte_aligned__*)' > $W/san-mem.txt 2>&1; echo "memcheck rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 compute-sanitizer --tool synccheck --error-exitcode 9 ab/tc_attn_gpu_test_w16 --jobs 1 --filter='*/@(partial_heads__*|low_payload_nan__*|inf_rope__*)' > $W/san-sync.txt 2>&1; echo "synccheck rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(mkdir -p $W/gc && cp -r fuzz/corpus/gathered_indices $W/gc/c && ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 timeout 100 ab/gathered_indices_fuzzer_w16 -max_total_time=60 -rss_limit_mb=0 -print_final_stats=1 $W/gc/c > $W/fuzz.txt 2>&1; echo "fuzz rc=$? $((SECONDS-T0)) s" >> $W/steps.txt; rm -rf $W/gc) &
wait
cd $W
python3 - <<'PY'
import json,glob,collections
rows=collections.defaultdict(list); sha={}
for f in sorted(glob.glob('at-*-*.json'))+sorted(glob.glob('kp-*.json')):
    v=f.split('-')[1].split('.')[0]
    d=json.load(open(f)); d=d['rows'] if isinstance(d,dict) else d
    for r in d:
        if 'attn' not in r['kernel']: continue
        k=(r['kernel'],r['shape'],r['arm'])
        rows[(k,v)].append(r['median_us']); sha.setdefault((k,v),set()).add(r.get('out_sha256'))
keys=sorted({k for k,v in rows})
for k in keys:
    b=rows.get((k,'base'),[]); w=rows.get((k,'w16'),[])
    same = sha.get((k,'base'))==sha.get((k,'w16'))
    print('%-60s base %-22s w16 %-22s bytes %s'%(' '.join(k)[:60], ' '.join('%.1f'%x for x in b), ' '.join('%.1f'%x for x in w), 'same' if same else 'DIFFER'))
PY
for f in tc_attn dense_gold kpool_gold decode_split; do echo "$f: $(grep -E 'Synthesis' $f.txt)"; done
grep -E "FAIL|\[FAIL\]" tc_attn.txt dense_gold.txt kpool_gold.txt decode_split.txt | head -10
for f in san-race san-mem san-sync; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f.txt | tail -1)"; done
grep -E "stat::number_of_executed_units|ERROR|deadly" fuzz.txt | head -3
cat steps.txt
cd $D && tar -czf /tmp/call2.tar.gz -C w . && rm -rf $D/w && mv /tmp/call2.tar.gz $D/
