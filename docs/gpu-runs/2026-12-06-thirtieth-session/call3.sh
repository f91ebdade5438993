#!/bin/bash
# Thirtieth session, call 3: where the wgmma arm's walk loses 4.5 us to the prototype's (call 2's
# ncu: 49.7 against 45.2 us at decode 32K). var/bd_<v>: bench_dense relinked with mla_attn_wg.cu
# built with timing-only switches (the working tree's WGX_* macros, never in a product build):
#   base: none (the same source as COMMIT's, the same relink);
#   P: the causal walk's producer as the prototype's (one thread, one expect and copy a stage, no
#      naming lanes, the converter's row mask from the chunk's end);
#   S: the prototype's softmax (no NaN poison, no NaN bookkeeping; the same values when finite);
#   R: no rare-path scan after the walk (no wg_or256);
#   PSR: all three;
#   C: a candidate for the product: P for the causal walk, S where every valid logit of a warp is
#      finite (else the arm's softmax), the rare path kept.
# 3 rounds alternating, BENCH_ONLY="TC door: wgmma"; out_sha256 compared against base; then ncu
# (caches and clocks as left) of the walk for base and PSR. Then the wgmma arm's mutation sample
# once more: the 16 ids that call 2 cut in tc_attn_gpu_test at its hard stop (each had passed
# the golden suites' tcwgmma cases and attn_shake_gpu_test), with tc_attn_gpu_test alone.
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
  for v in base P S R PSR C; do
    MLA_BENCH_JSON=$D/w/$v-$r.json BENCH_ONLY="TC door: wgmma" timeout 60 var/bd_$v > $D/w/$v-$r.md 2>$D/w/$v-$r.err; st "bench $v $r" $?
  done
done
for v in base PSR C; do
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 60 ncu --cache-control none --clock-control none --kernel-name regex:"attn_tc_wg" --launch-skip 2 --launch-count 2 --section SpeedOfLight var/bd_$v > $D/w/ncu-$v.txt 2>&1; st "ncu $v" $?
done
IDS=08043a37ea,ac407e68e7,9207e879c1,0e915b6054,1a310a4f69,6102ef9023,ddcd7f3bcb,1119b792f1,639ced6cb9,b7ab3bc370,c9aaadb002,e0cb624b7d,3c65bdc1f5,b68148a1c3,69af42842c,8cf167c36e
timeout 330 python3 tools/mutate.py run --bundle . --file mla_attn_wg.cu --ids $IDS \
  --checks 'tc_attn_gpu_test' \
  --jobs 16 --timeout 150 --sanitizer-timeout 200 --deadline 200 --grace 100 --prime-baselines \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st mutate $?
cd $D/w
python3 - <<'PY'
import json
def rows(f):
    d = json.load(open(f))
    if isinstance(d, dict): d = next(v for v in d.values() if isinstance(v, list))
    return {(r["kernel"] + " " + r["shape"]): (r["median_us"], r.get("out_sha256")) for r in d}
vs = ["base", "P", "S", "R", "PSR", "C"]
R = {(v, r): rows(f"{v}-{r}.json") for v in vs for r in (1, 2, 3)}
keys = list(R[("base", 1)].keys())
print("| row | " + " | ".join(vs) + " |")
print("| --- |" + " ---: |" * len(vs))
for k in keys:
    cells = []
    for v in vs:
        t = sorted(R[(v, r)][k][0] for r in (1, 2, 3))
        same = all(R[(v, r)][k][1] == R[("base", 1)][k][1] for r in (1, 2, 3))
        cells.append(f"{t[1]:.2f} ({t[0]:.2f}-{t[2]:.2f}){'' if same else ' DIFF'}")
    print(f"| {k} | " + " | ".join(cells) + " |")
PY
for f in ncu-*.txt; do echo "== $f"; grep -E "Duration|Memory Throughput" $f; done
sed -n '1,70p' mutate/mutation-report.md | cut -c1-300
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/steps.txt .; rm -rf w
