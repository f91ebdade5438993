#!/bin/bash
# Thirtieth session, call 4, at COMMIT (625212e: the wgmma arm's softmax without its NaN
# bookkeeping where a warp's valid logits are all finite):
#  1. A/B, 3 rounds alternating, BENCH_ONLY="TC door: wgmma": bin/bench_dense (COMMIT) against
#     var/bd_base (6cf65ee's arm, call 3's relink) and var/bd_S (call 3's timing-only switch S);
#     out_sha256 compared against bd_base on every row;
#  2. the GPU tier with benchmarks and the goals table;
#  3. memcheck and racecheck on tc_attn_gpu_test's __wgmma cases (the special-value cases take
#     the other softmax path) and attn_shake_gpu_test's;
#  4. with the time left: the wgmma arm's 16 mutants that the twenty-ninth session's call 6 and
#     this session's call 2 left undecided, their ids remapped by content to COMMIT's source
#     (call4-remap.txt), tc_attn_gpu_test and its sanitizer stages alone (each had passed the
#     golden suites' tcwgmma cases and attn_shake_gpu_test in call 2).
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
cp bin/bench_dense var/bd_new
for r in 1 2 3; do
  for v in base S new; do
    MLA_BENCH_JSON=$D/w/$v-$r.json BENCH_ONLY="TC door: wgmma" timeout 60 var/bd_$v > $D/w/$v-$r.md 2>$D/w/$v-$r.err; st "bench $v $r" $?
  done
done
(cd $D/w && python3 - > $D/w/ab.md) <<'PY'
import json
def rows(f):
    d = json.load(open(f))
    if isinstance(d, dict): d = next(v for v in d.values() if isinstance(v, list))
    return {(r["kernel"] + " " + r["shape"]): (r["median_us"], r.get("out_sha256")) for r in d}
vs = ["base", "S", "new"]
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
st ab 0
OUT=$R/bundle/out timeout 260 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
cp out/goals.md $D/ 2>/dev/null; tail -n 16 $D/w/tier.log > $D/tier-tail.txt
tar -czf $D/w/tier-logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 3 bin/tc_attn_gpu_test --jobs 1 --filter '*__wgmma*' > $D/w/san-$tool-tc.log 2>&1; st "$tool tc_attn __wgmma" $?
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 3 bin/attn_shake_gpu_test --jobs 1 --filter '*wgmma*' > $D/w/san-$tool-shake.log 2>&1; st "$tool attn_shake wgmma" $?
done
LEFT=$((585 - (SECONDS - T0)))
if [ $LEFT -gt 140 ]; then
  [ -d relink ] || tar -xJf relink.tar.xz
  IDS=fb337c9b7c,22bb97617e,1af73fef99,e2eca845aa,1e4619782b,6a2a1d08df,3f117e73ef,e5c7a7c91f,6753d10b2e,2e9272be78,3ff4c2d6a8,b135a4d927,d94b2d0ec4,f524b722ad,b7f356953a,685d71e5a0
  DL=$(( (LEFT - 20) * 2 / 3 )); GR=$(( (LEFT - 20) / 3 ))
  timeout $((LEFT - 5)) python3 tools/mutate.py run --bundle . --file mla_attn_wg.cu --ids $IDS \
    --checks 'tc_attn_gpu_test' --jobs 16 --timeout 150 --sanitizer-timeout 200 \
    --deadline $DL --grace $GR --prime-baselines --out $D/w/mutate > $D/w/mutate.log 2>&1; st "mutate (deadline $DL grace $GR)" $?
fi
cd $D/w
cat ab.md
tail -n 3 tier.log; head -n 12 goals.md 2>/dev/null
for f in san-*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Synthesis' $f | tr '\n' ' ')"; done
sed -n '1,30p' mutate/mutation-report.md 2>/dev/null | cut -c1-240
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/steps.txt w/ab.md .; rm -rf w
