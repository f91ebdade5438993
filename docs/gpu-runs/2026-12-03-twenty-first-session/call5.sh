#!/bin/bash
# twenty-first session, call 5: 6b7e2b7 (the review: launch_checked and io_views in
# tc_attn_gpu_test, fill_dev in bench_dense): tc_attn_gpu_test of the product door and of the three
# truncating doors (each must fail exactly its tests), and bench_dense's decompress_v and absorb_q
# rows, whose out_sha256 must equal call 3's (25484a7)
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
rm -rf ab; tar -xJf ab.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
cat COMMIT > $D/steps.txt
for v in base ctrunc qtrunc ptrunc; do
  (timeout 200 ab/tc_attn_gpu_test_$v --jobs 2 --verbose > $D/tc_attn-$v.txt 2>&1; echo "tc_attn $v rc=$? $((SECONDS-T0)) s" >> $D/steps.txt) &
done
wait
BENCH_ONLY="decompress_v" MLA_BENCH_JSON=$D/bd.json timeout 120 ab/bench_dense_base 10 > $D/bd.txt 2>&1; echo "bench rc=$? $((SECONDS-T0)) s" >> $D/steps.txt
for v in base ctrunc qtrunc ptrunc; do f=$D/tc_attn-$v.txt; echo "$v: $(grep -E 'Synthesis' $f)"; grep -E "^\[FAIL\]" $f | grep -oE "::[A-Za-z0-9_]+" | tr '\n' ' '; echo; done
grep -E "^\[----\].*rounding__" $D/tc_attn-base.txt
python3 - "$D/bd.json" call3-bench-dense.json <<'PY'
import json,sys
def rows(f):
    d=json.load(open(f)); d=d['rows'] if isinstance(d,dict) else d
    return {(r['kernel'],r['shape'],r['arm']):r.get('out_sha256') for r in d}
a,b=rows(sys.argv[1]),rows(sys.argv[2])
same=[k for k in a if k in b and a[k] and a[k]==b[k]]; diff=[k for k in a if k in b and a[k]!=b[k]]
print('bench rows vs call 3: %d identical, %d differ' % (len(same), len(diff)), diff)
PY
cat $D/steps.txt
