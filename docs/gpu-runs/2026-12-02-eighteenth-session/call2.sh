#!/bin/bash
# eighteenth session, call 2: the combine with all its loads in flight (ab/*_cmb) and the same with
# the walk's programmatic-dependent trigger after its main loop (ab/*_late), against HEAD (bin/):
# interleaved bench rows (out_sha256 compared), the combine's ncu time, the tests and sanitizers
# on the late build, and a per-instruction (SASS) stall profile of the door at decode 32K
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
  for v in base cmb late; do
    MLA_BENCH_JSON=$W/bd-$v-$r.json timeout 100 ab/bench_dense_$v 50 > $W/bd-$v-$r.txt 2>&1
    echo "bench_dense $v $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
    MLA_BENCH_JSON=$W/bk-$v-$r.json timeout 100 ab/bench_kpool_$v > $W/bk-$v-$r.txt 2>&1
    echo "bench_kpool $v $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
  done
done
for v in base cmb; do
  BENCH_ONLY="attn_absorbed decode TC door: tf32" timeout 100 ncu --clock-control none --cache-control none --kernel-name regex:"attn_tc_f32|attn_combine_f32" --launch-skip 4 --launch-count 2 --metrics gpu__time_duration.sum,smsp__cycles_active.avg,smsp__issue_active.avg.pct_of_peak_sustained_active ab/bench_dense_$v 20 > $W/ncu-comb-$v.txt 2>&1
  echo "ncu comb $v rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
done
BENCH_ONLY="attn_absorbed decode TC door: tf32" timeout 150 ncu --clock-control none --kernel-name regex:attn_tc_f32 --launch-skip 4 --launch-count 1 --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy -f -o $W/door bin/bench_dense 20 > $W/ncu-src.txt 2>&1
echo "ncu src rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
timeout 100 ncu -i $W/door.ncu-rep --page source --csv --print-source sass > $W/door-sass.csv 2> $W/door-sass.err
echo "ncu sass rc=$? $((SECONDS-T0)) s $(wc -l < $W/door-sass.csv) lines" >> $W/steps.txt
timeout 100 ncu -i $W/door.ncu-rep --page details > $W/door-details.txt 2>&1
(timeout 200 ab/tc_attn_gpu_test_late > $W/tc_attn.txt 2>&1; echo "tc_attn rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 ab/dense_gpu_goldens_test_late --jobs 4 > $W/dense_gold.txt 2>&1; echo "dense_gold rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 ab/kpool_gpu_goldens_test_late --jobs 4 > $W/kpool_gold.txt 2>&1; echo "kpool_gold rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
for tool in racecheck memcheck synccheck; do
(timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 ab/dense_gpu_goldens_test_late --jobs 1 --filter='*/@(san_*|bad_arguments_write_nothing)' > $W/san-$tool-dense.txt 2>&1; echo "$tool dense rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
done
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
print('%-52s %-18s %-18s %-18s'%('row','base','cmb','late'))
for k in keys:
    b=rows.get((k,'base'),[])
    line='%-52s'%(' | '.join(k)[:52])
    for v in ('base','cmb','late'):
        x=rows.get((k,v),[]); line+=' %-18s'%(' '.join('%.1f'%y for y in x))
    for v in ('cmb','late'):
        x=rows.get((k,v),[])
        if b and x: line+=' %s %.3f'%(v,statistics.median(x)/statistics.median(b))
    print(line)
allk={k for k,v in sha}
d=[k for k in allk if not (sha.get((k,'base'))==sha.get((k,'cmb'))==sha.get((k,'late')))]
print('rows', len(allk), 'with differing out_sha256:', len(d), d[:5])
PY
for f in ncu-comb-*.txt; do echo "== $f"; grep -E "attn_|gpu__time|cycles_active|issue_active" $f | awk '{print $1, $NF}' | head -12; done
for f in tc_attn dense_gold kpool_gold; do echo "$f: $(grep -E 'Synthesis' $f.txt)"; done
for f in san-*.txt; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f | tail -1) $(grep -E 'Synthesis' $f)"; done
head -c 600 door-sass.csv; echo; head -5 door-sass.err
cat steps.txt
rm -f door.ncu-rep.bak
cd $D && tar -czf /tmp/call2.tar.gz -C w . && rm -rf $D/w && mv /tmp/call2.tar.gz $D/
