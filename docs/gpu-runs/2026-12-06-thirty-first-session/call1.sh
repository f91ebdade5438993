#!/bin/bash
# Thirty-first session, call 1 (written in the thirtieth session as next-call1.sh; run as written).
# Bundle: branch wgmma-softmax-derived (the wgmma arm's softmax without per-tile NaN bookkeeping,
# the poison read at the walk's end from a NaN l; rebased on main), built with
# `tools/harness bundle bundle`; rm -rf bundle/golden; git rev-parse --short HEAD > bundle/COMMIT;
# var/bench_dense_main.xz: main's bench_dense (bazel build //tools/bench:bench_dense on main).
# Correctness first, then the A/B, then the tier:
#  1. tc_attn_gpu_test's __wgmma cases and every arm's ninf_run_exact_q (new: whole chunks of -inf
#     logits, the derived softmax's m' = -inf path);
#  2. A/B, 3 rounds alternating, BENCH_ONLY="TC door: wgmma": bin/bench_dense against
#     var/bench_dense_main; out_sha256 must match on every row (finite inputs). Expected from call
#     3's switch S (H100): decode 32K about -1.5 us, verify and prefill about -9 us;
#  3. the GPU tier with benchmarks and the goals table;
#  4. memcheck and racecheck on step 1's __wgmma cases and attn_shake's;
#  5. ncu of main's, the branch's and the prototype's walks in the same call;
#  6. probe_door_wgmma's "walk + half combine" column (new, thirtieth session).
# Then next-call2.sh (mutation).
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
timeout 60 bin/tc_attn_gpu_test --jobs 8 --filter '*@(__wgmma|ninf_run_exact_q__*)' > $D/w/tc.log 2>&1; st "tc_attn __wgmma, ninf_run" $?
cp bin/bench_dense var/bd_new; cp var/bench_dense_main var/bd_main
for r in 1 2 3; do
  for v in main new; do
    MLA_BENCH_JSON=$D/w/$v-$r.json BENCH_ONLY="TC door: wgmma" timeout 60 var/bd_$v > $D/w/$v-$r.md 2>$D/w/$v-$r.err; st "bench $v $r" $?
  done
done
(cd $D/w && python3 - > $D/w/ab.md) <<'PY'
import json
def rows(f):
    d = json.load(open(f))
    if isinstance(d, dict): d = next(v for v in d.values() if isinstance(v, list))
    return {(r["kernel"] + " " + r["shape"]): (r["median_us"], r.get("out_sha256")) for r in d}
vs = ["main", "new"]
R = {(v, r): rows(f"{v}-{r}.json") for v in vs for r in (1, 2, 3)}
keys = list(R[("main", 1)].keys())
print("| row | " + " | ".join(vs) + " |")
print("| --- |" + " ---: |" * len(vs))
for k in keys:
    cells = []
    for v in vs:
        t = sorted(R[(v, r)][k][0] for r in (1, 2, 3))
        same = all(R[(v, r)][k][1] == R[("main", 1)][k][1] for r in (1, 2, 3))
        cells.append(f"{t[1]:.2f} ({t[0]:.2f}-{t[2]:.2f}){'' if same else ' DIFF'}")
    print(f"| {k} | " + " | ".join(cells) + " |")
PY
st ab $?
OUT=$R/bundle/out timeout 280 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
cp out/goals.md $D/ 2>/dev/null; tail -n 16 $D/w/tier.log > $D/tier-tail.txt
tar -czf $D/w/tier-logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 3 bin/tc_attn_gpu_test --jobs 1 --filter '*@(__wgmma|ninf_run_exact_q__*)' > $D/w/san-$tool-tc.log 2>&1; st "$tool tc_attn" $?
  timeout 40 compute-sanitizer --tool $tool --error-exitcode 3 bin/attn_shake_gpu_test --jobs 1 --filter '*wgmma*' > $D/w/san-$tool-shake.log 2>&1; st "$tool attn_shake wgmma" $?
done
# 5. ncu in one call (caches and clocks as left): main's walk, the branch's, and the prototype's
#    (the thirtieth session compared them across calls, where ncu's walk times moved by 6 us)
for v in main new; do
  BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 40 ncu --cache-control none --clock-control none --kernel-name regex:"attn_tc_wg" --launch-skip 2 --launch-count 2 --section SpeedOfLight var/bd_$v > $D/w/ncu-$v.txt 2>&1; st "ncu $v" $?
done
timeout 60 ncu --cache-control none --clock-control none --kernel-name regex:"wg_walk" --launch-count 1 --section SpeedOfLight bin/probe_door_wgmma --once > $D/w/ncu-probe.txt 2>&1; st "ncu probe" $?
# 6. the prototype's new column: the walk then the combine over half its chunks (what a plan with
#    half the chunks would pay for its combine)
timeout 120 bin/probe_door_wgmma --rounds 3 > $D/w/probe-wgmma.md 2>&1; st probe_door_wgmma $?
cd $D/w
cut -c1-200 probe-wgmma.md | head -8
for f in ncu-*.txt; do echo "== $f"; grep -E "wg_walk|Duration|SM Frequency" $f; done
grep -E "Synthesis|FAIL" tc.log | tail -5
cat ab.md
tail -n 3 tier.log; head -n 12 goals.md 2>/dev/null
for f in san-*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Synthesis' $f | tr '\n' ' ')"; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/steps.txt w/ab.md .; rm -rf w
