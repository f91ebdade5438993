#!/bin/bash
# nineteenth session, call 4: the review commit (at_store_frags folded: the door's one-chunk store)
# at HEAD: tc_attn_gpu_test, both golden suites (every fixture case's tf32 door checks, the
# general-width arm among them), attn_shake, decode_split, one bench_dense round (its door rows'
# out_sha256 against call 2's), memcheck of the door's cases
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
MLA_BENCH_JSON=$W/bd.json timeout 100 bin/bench_dense 50 > $W/bd.txt 2>&1; echo "bench_dense rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
(timeout 250 bin/tc_attn_gpu_test --jobs 4 > $W/tc_attn.txt 2>&1; echo "tc_attn rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 bin/dense_gpu_goldens_test --jobs 4 > $W/dense_gold.txt 2>&1; echo "dense_gold rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 bin/kpool_gpu_goldens_test --jobs 4 > $W/kpool_gold.txt 2>&1; echo "kpool_gold rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 200 bin/attn_shake_gpu_test > $W/shake.txt 2>&1; timeout 200 bin/decode_split_gpu_test > $W/decode_split.txt 2>&1; echo "shake+split rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
(timeout 250 compute-sanitizer --tool memcheck --error-exitcode 9 bin/tc_attn_gpu_test --jobs 1 --filter='*/@(partial_heads__*|low_payload_nan__tf32|declines_uncovered|q_4byte_aligned__*)' > $W/san-memcheck-tc.txt 2>&1; echo "memcheck tc rc=$? $((SECONDS-T0)) s" >> $W/steps.txt) &
wait
cd $W
for f in tc_attn dense_gold kpool_gold shake decode_split; do echo "$f: $(grep -E 'Synthesis' $f.txt)"; done
echo "san-memcheck-tc: $(grep -E 'ERROR SUMMARY' san-memcheck-tc.txt | tail -1) $(grep Synthesis san-memcheck-tc.txt)"
python3 -c "
import json
d=json.load(open('bd.json')); d=d['rows'] if isinstance(d,dict) else d
for r in d:
    if r['kernel'].startswith('attn') and 'tf32' in r['arm'] and '3x' not in r['arm']: print(r['kernel'],r['shape'],r['arm'],round(r['median_us'],1),r.get('out_sha256'))
"
cat steps.txt
cd $D && tar -czf call4.tar.gz -C w . && rm -rf w
