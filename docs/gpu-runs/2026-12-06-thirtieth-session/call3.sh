#!/bin/bash
# Thirtieth session, call 3. bundle/: d57fb05 (branch wgmma-fastpath, the candidate C below);
# Steps:
#  1. where the wgmma arm's walk loses 4.5 us to the prototype's (call 2's ncu: 49.7 against 45.2
#     us at decode 32K). var/bd_<v>: bench_dense relinked with 6cf65ee's mla_attn_wg.cu built with
#     timing-only switches (call3-wgx-switches.patch, never in a product build):
#       base: none (6cf65ee's source, the same relink);
#       P: the causal walk's producer as the prototype's (one thread, one expectation and one copy
#          a stage, no naming lanes, the converter's row mask from the chunk's end);
#       S: the prototype's softmax (no NaN bookkeeping; the same values when finite);
#       R: no rare-path scan after the walk (no wg_or256);
#       PSR: all three;
#       C: d57fb05's mla_attn_wg.cu (P for the causal walk; S where a warp's valid logits are
#          all finite, else the arm's softmax; the rare path kept).
#     3 rounds alternating, BENCH_ONLY="TC door: wgmma"; out_sha256 compared against base;
#  2. if C is faster than base at decode 32K by more than 0.5 us (medians of the 3 rounds) with
#     the same bytes on every row: the GPU tier with benchmarks on d57fb05's bundle;
#  3. ncu (caches and clocks as left) of the walk for base and C;
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
xz -d var/*.xz; chmod +x var/*
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
VS="base P S R PSR C"
for r in 1 2 3; do
  for v in $VS; do
    MLA_BENCH_JSON=$D/w/$v-$r.json BENCH_ONLY="TC door: wgmma" timeout 60 var/bd_$v > $D/w/$v-$r.md 2>$D/w/$v-$r.err; st "bench $v $r" $?
  done
done
(cd $D/w && python3 - > $D/w/variants.md) <<'PY'
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
med, same_all = {}, True
for k in keys:
    cells = []
    for v in vs:
        t = sorted(R[(v, r)][k][0] for r in (1, 2, 3))
        same = all(R[(v, r)][k][1] == R[("base", 1)][k][1] for r in (1, 2, 3))
        if v == "C" and not same: same_all = False
        med[(v, k)] = t[1]
        cells.append(f"{t[1]:.2f} ({t[0]:.2f}-{t[2]:.2f}){'' if same else ' DIFF'}")
    print(f"| {k} | " + " | ".join(cells) + " |")
k = next(k for k in keys if k.endswith(" decode"))
go = same_all and med[("C", k)] < med[("base", k)] - 0.5
print(f"\ndecision: C {med[('C', k)]:.2f} against base {med[('base', k)]:.2f} at {k}, bytes same on every row: {same_all}: {'tier' if go else 'no tier'}")
open("DECISION", "w").write("tier" if go else "none")
PY
st variants 0
if [ "$(cat $D/w/DECISION)" = tier ]; then
  OUT=$R/bundle/out timeout 260 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
  cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
  cp out/goals.md $D/ 2>/dev/null; tail -n 16 $D/w/tier.log > $D/tier-tail.txt
  tar -czf $D/w/tier-logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
fi
for v in base C; do
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 40 ncu --cache-control none --clock-control none --kernel-name regex:"attn_tc_wg" --launch-skip 2 --launch-count 2 --section SpeedOfLight var/bd_$v > $D/w/ncu-$v.txt 2>&1; st "ncu $v" $?
done
cd $D/w
cat variants.md
tail -n 4 tier.log 2>/dev/null; head -n 12 goals.md 2>/dev/null
for f in ncu-*.txt; do echo "== $f"; grep -E "Duration|SM Frequency" $f; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/steps.txt w/variants.md .; rm -rf w
