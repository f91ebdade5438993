#!/bin/bash
# Thirtieth session, call 2 (bundle of COMMIT, 6cf65ee, plus var/bench_dense_cb64: the working
# tree with attn_combine_f32<64> for plans of more than 64 chunks, every column's 128 partial loads
# in flight at once instead of two batches of 32 then two more):
#  1. A/B: the attn_absorbed decode rows (every arm) of bin/bench_dense (6cf65ee) and
#     var/bench_dense_cb64, alternating, 3 rounds; out_sha256 must match between them;
#  2. ncu, caches and clocks as the run left them: the combine of both (one decode-32K door call);
#  3. ncu of probe_door_wgmma's walk and combine (--once), to set the prototype's walk beside the
#     arm's (the 4.5 us the arm is behind the prototype at decode 32K: in the walk or not?);
#  4. the wgmma arm's mutation sample continued: the 27 ids without a verdict in the twenty-ninth
#     session's call 6 (mla_attn_wg.cu unchanged since 2cb2481).
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
[ -d relink ] || tar -xJf relink.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
xz -d var/*.xz; chmod +x var/*
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
for r in 1 2 3; do
  for b in bin/bench_dense var/bench_dense_cb64; do
    n=$(basename $b)
    MLA_BENCH_JSON=$D/w/ab-$n-$r.json BENCH_ONLY="attn_absorbed decode" timeout 90 $b > $D/w/ab-$n-$r.md 2>$D/w/ab-$n-$r.err; st "bench $n $r" $?
  done
done
NCU=$(command -v ncu)
for b in bin/bench_dense var/bench_dense_cb64; do
  n=$(basename $b)
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 90 $NCU --cache-control none --clock-control none --kernel-name regex:"attn_combine_f32" --launch-skip 2 --launch-count 2 --section SpeedOfLight --section MemoryWorkloadAnalysis $b > $D/w/ncu-combine-$n.txt 2>&1; st "ncu combine $n" $?
done
timeout 90 $NCU --cache-control none --clock-control none --kernel-name regex:"wg_walk|probe_combine" --launch-count 6 --section SpeedOfLight bin/probe_door_wgmma --once > $D/w/ncu-probe.txt 2>&1; st "ncu probe" $?
IDS=b7ab3bc370,9207e879c1,ac407e68e7,b68148a1c3,ddcd7f3bcb,0e915b6054,69af42842c,1119b792f1,08043a37ea,639ced6cb9,e0cb624b7d,6e34051d93,0adbfd64c1,eb128edd8a,1a310a4f69,3c65bdc1f5,d9e571b0d6,6102ef9023,4285863862,1cdcea6629,eaddadd1b9,d1dfff7086,8cf167c36e,a1b4704dc2,6909718308,c9aaadb002,8a1b6bb73b
timeout 400 python3 tools/mutate.py run --bundle . --file mla_attn_wg.cu --ids $IDS \
  --checks 'tcwgmma|tc_attn_gpu_test|attn_shake_gpu_test' \
  --jobs 16 --timeout 150 --sanitizer-timeout 200 --deadline 230 --grace 120 --prime-baselines \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st mutate $?
cd $D/w
for f in ab-*.md; do echo "== $f"; grep -E "^\| attn_absorbed" $f | cut -d'|' -f2-6 | head -40; done
python3 - <<'PY'
import json, glob
def rows(f):
    d = json.load(open(f))
    if isinstance(d, dict): d = next(v for v in d.values() if isinstance(v, list))
    return {(r["kernel"], r["shape"], r["arm"]): r.get("out_sha256") for r in d}
for r in (1, 2, 3):
    a, b = rows(f"ab-bench_dense-{r}.json"), rows(f"ab-bench_dense_cb64-{r}.json")
    same = sum(a[k] == b.get(k) for k in a)
    print(f"round {r}: {len(a)} rows, out_sha256 equal in {same}; differ: {[k for k in a if a[k] != b.get(k)]}")
PY
for f in ncu-*.txt; do echo "== $f"; grep -E "attn_combine|wg_walk|probe_combine|Duration|L2 Hit|Memory Throughput|Grid Size|^  [a-z]" $f | head -40; done
sed -n '1,60p' mutate/mutation-report.md
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/steps.txt .; rm -rf w
