#!/bin/bash
# twentieth session, call 1: the tf32 door's A/B against HEAD (ab/*_base): its cache elements fed to
# the mma as raw f32 bits (the mma reads the top 19: truncation) in both products (trunc) or only
# in P . V (truncv), the tiles as bulk copies spread over the 8 warps (b8, the eighteenth
# session's door-bulk-copies-8warps.patch), and b8 + trunc: three interleaved rounds of the door's
# bench rows; ncu counters of base / trunc / b8 at decode 32K; the SASS source profile of the
# 3xtf32 arm (owed since the nineteenth session); the tests of each variant under the door's
# present (round-to-nearest) class, and racecheck / synccheck / memcheck of b8's door cases
set -o pipefail
D=$OUT; T0=$SECONDS
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
V="base trunc truncv b8 b8trunc"
for r in 1 2 3; do
  for v in $V; do
    BENCH_ONLY="TC door: tf32" MLA_BENCH_JSON=$W/bd-$v-$r.json timeout 40 ab/bench_dense_$v 30 > $W/bd-$v-$r.txt 2>&1
    echo "bench $v $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
  done
done
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct,smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,launch__registers_per_thread
for v in base trunc b8; do
  BENCH_ONLY="attn_absorbed decode TC door: tf32" timeout 100 ncu --clock-control none --kernel-name regex:attn_tc_f32 --launch-skip 4 --launch-count 1 --metrics $M ab/bench_dense_$v 20 > $W/ncu-$v.txt 2>&1
  echo "ncu $v rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
done
BENCH_ONLY="attn_absorbed decode TC door: 3xtf32" timeout 150 ncu --clock-control none --kernel-name regex:attn_walk_f32 --launch-skip 2 --launch-count 1 --section SourceCounters --section WarpStateStats -f -o $W/x3 bin/bench_dense 20 > $W/ncu-x3-src.txt 2>&1
echo "ncu x3 src rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
timeout 100 ncu -i $W/x3.ncu-rep --page source --csv --print-source sass > $W/x3-sass.csv 2> $W/x3-sass.err
echo "ncu x3 sass rc=$? $((SECONDS-T0)) s $(wc -l < $W/x3-sass.csv) lines" >> $W/steps.txt
for v in trunc truncv b8 b8trunc; do
  (timeout 200 ab/tc_attn_gpu_test_$v --jobs 2 > $W/tc_attn-$v.txt 2>&1; echo "tc_attn $v rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
done
(timeout 250 ab/dense_gpu_goldens_test_trunc --jobs 3 > $W/dense_gold-trunc.txt 2>&1; echo "dense_gold trunc rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 ab/kpool_gpu_goldens_test_trunc --jobs 3 > $W/kpool_gold-trunc.txt 2>&1; echo "kpool_gold trunc rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
for tool in memcheck racecheck synccheck; do
(timeout 250 compute-sanitizer --tool $tool --error-exitcode 9 ab/tc_attn_gpu_test_b8 --jobs 1 --filter='*/@(glm5_decode__tf32|partial_heads__tf32|low_payload_nan__tf32|gathered__tf32|q_4byte_aligned__gathered)' > $W/san-$tool-b8.txt 2>&1; echo "$tool b8 rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
done
wait
rm -f $W/x3.ncu-rep
cd $W
python3 - <<'PY'
import json,glob,collections,statistics
rows=collections.defaultdict(list); sha={}
V=['base','trunc','truncv','b8','b8trunc']
for f in sorted(glob.glob('bd-*-*.json')):
    v=f.split('-')[1]
    try: d=json.load(open(f))
    except Exception as e: print('bad json',f,e); continue
    d=d['rows'] if isinstance(d,dict) else d
    for r in d:
        k=(r['kernel'],r['shape'],r['arm'])
        rows[(k,v)].append(r['median_us']); sha.setdefault((k,v),set()).add((r.get('out_sha256') or '')[:8])
keys=sorted({k for k,v in rows})
print('%-44s'%'row'+''.join(' %-9s'%v for v in V))
for k in keys:
    b=rows.get((k,'base'),[])
    line='%-44s'%(' | '.join(k)[:44])
    for v in V:
        x=rows.get((k,v),[]); line+=' %-9s'%('%.1f'%statistics.median(x) if x else '-')
    line+='   ratios '+' '.join('%s %.3f'%(v,statistics.median(rows[(k,v)])/statistics.median(b)) for v in V[1:] if rows.get((k,v)) and b)
    print(line)
    print('%-44s'%'  sha / rounds'+''.join(' %-9s'%(','.join(sorted(sha.get((k,v),{'-'})))) for v in V))
PY
for f in ncu-*.txt; do echo "== $f"; awk '/^  [a-zA-Z_<]/{k=$1} /__/{print substr(k,1,24), $1, $NF}' $f | head -20; done
for f in tc_attn-*.txt dense_gold-trunc.txt kpool_gold-trunc.txt; do echo "$f: $(grep -E 'Synthesis' $f)"; grep -E "FAIL|fail" $f | head -6; done
for f in san-*.txt; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f | tail -1) $(grep -E 'Synthesis' $f)"; done
head -c 400 x3-sass.csv; echo; head -3 x3-sass.err
cat steps.txt
cd $D && tar -czf /tmp/call1.tar.gz -C w . && rm -rf $D/w && mv /tmp/call1.tar.gz $D/
