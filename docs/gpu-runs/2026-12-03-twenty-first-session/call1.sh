#!/bin/bash
# twenty-first session, call 1: (a) the tf32 door's A/B lost with the twentieth session's tarball:
# base / b8 (bulk copies over 8 warps) / ctrunc (cache operands truncated), three interleaved rounds
# of the door's bench rows, alone on the GPU; (b) the new rounding tests: tc_attn_gpu_test of base
# (must pass) and of three truncating doors (ctrunc: the cache in both products, qtrunc: q,
# ptrunc: the softmax weights; each must fail exactly the new tests that see its conversion), and
# the golden suites of qtrunc and ptrunc (do the fixtures see them?); b8's tc_attn_gpu_test
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
V="base b8 ctrunc"
for r in 1 2 3; do
  for v in $V; do
    BENCH_ONLY="TC door: tf32" MLA_BENCH_JSON=$W/bd-$v-$r.json timeout 60 ab/bench_dense_$v 30 > $W/bd-$v-$r.txt 2>&1
    echo "bench $v $r rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
  done
done
timeout 200 ab/tc_attn_gpu_test_base --jobs 2 --verbose > $W/tc_attn-base.txt 2>&1; echo "tc_attn base rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
for v in b8 ctrunc qtrunc ptrunc; do
  (timeout 240 ab/tc_attn_gpu_test_$v --jobs 2 > $W/tc_attn-$v.txt 2>&1; echo "tc_attn $v rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
done
for v in qtrunc ptrunc; do
  (timeout 300 ab/dense_gpu_goldens_test_$v --jobs 3 > $W/dense_gold-$v.txt 2>&1; echo "dense_gold $v rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
  (timeout 300 ab/kpool_gpu_goldens_test_$v --jobs 2 > $W/kpool_gold-$v.txt 2>&1; echo "kpool_gold $v rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
done
wait
cd $W
python3 - <<'PY'
import json,glob,collections,statistics
rows=collections.defaultdict(list); sha={}
V=['base','b8','ctrunc']
for f in sorted(glob.glob('bd-*-*.json')):
    v=f.split('-')[1]
    try: d=json.load(open(f))
    except Exception as e: print('bad json',f,e); continue
    d=d['rows'] if isinstance(d,dict) else d
    for r in d:
        k=(r['kernel'],r['shape'],r['arm'])
        rows[(k,v)].append(r['median_us']); sha.setdefault((k,v),set()).add((r.get('out_sha256') or '')[:8])
keys=sorted({k for k,v in rows})
print('%-50s'%'row'+''.join(' %-16s'%v for v in V))
for k in keys:
    b=rows.get((k,'base'),[])
    line='%-50s'%(' | '.join(k)[:50])
    for v in V:
        x=rows.get((k,v),[]); line+=' %-16s'%('/'.join('%.1f'%y for y in x) if x else '-')
    line+='  med ratio '+' '.join('%s %.3f'%(v,statistics.median(rows[(k,v)])/statistics.median(b)) for v in V[1:] if rows.get((k,v)) and b)
    print(line)
    print('%-50s'%'  sha'+''.join(' %-16s'%(','.join(sorted(sha.get((k,v),{'-'})))) for v in V))
PY
grep -E "rounding__" tc_attn-base.txt | head -12
for f in tc_attn-*.txt dense_gold-*.txt kpool_gold-*.txt; do echo "$f: $(grep -E 'Synthesis' $f)"; grep -E "FAIL" $f | grep -oE "[a-z_]+::[A-Za-z0-9_]+" | sort -u | head -14 | tr '\n' ' '; echo; done
cat steps.txt
cd $D && tar -czf /tmp/call1.tar.gz -C w . && rm -rf $D/w && mv /tmp/call1.tar.gz $D/
