#!/bin/bash
# eighteenth session, call 5 (written, never started: the 155 s left could not start a machine): the door's tiles as bulk copies spread
# over the 8 warps (4 rows a warp, ab/*_spread, door-bulk-copies-8warps.patch) against 3c05d40
# (bin/): the door's bench rows, two interleaved rounds, and tc_attn_gpu_test at spread
D=$OUT; T0=$SECONDS
cd bundle
[ -d bin ] || tar -xJf bin.tar.xz
rm -rf ab; tar -xJf ab.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
for r in 1 2; do
  BENCH_ONLY="TC door: tf32" MLA_BENCH_JSON=$D/bd-base-$r.json timeout 25 bin/bench_dense 30 > $D/bd-base-$r.txt 2>&1; echo "base $r rc=$? $((SECONDS-T0)) s" >> $D/steps.txt
  BENCH_ONLY="TC door: tf32" MLA_BENCH_JSON=$D/bd-spread-$r.json timeout 25 ab/bench_dense_spread 30 > $D/bd-spread-$r.txt 2>&1; echo "spread $r rc=$? $((SECONDS-T0)) s" >> $D/steps.txt
done
timeout 40 ab/tc_attn_gpu_test_spread > $D/tc_attn.txt 2>&1; echo "tc_attn rc=$? $((SECONDS-T0)) s" >> $D/steps.txt
grep -h "Synthesis" $D/tc_attn.txt; cat $D/steps.txt
python3 - <<'PY'
import json,glob,os
D=os.environ['OUT']
for f in sorted(glob.glob(D+'/bd-*.json')):
    d=json.load(open(f)); d=d['rows'] if isinstance(d,dict) else d
    print(os.path.basename(f), ' '.join('%s=%.1f:%s'%(r['shape'],r['median_us'],(r.get('out_sha256') or '')[:8]) for r in d))
PY
