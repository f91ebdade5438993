#!/bin/bash
# Written in the thirty-first session after its device time, NOT RUN: the next session's second
# call (after next-call1.sh, whose mutant ids are offsets of main's mla_attn_wg.cu, which this
# branch changes). Bundle: branch wgmma-no-rare-path, the wgmma arm without the rare path of an
# infinite logit (its scan could only set poison bits already set), rebased on main (04ec5b6),
# so step 1 runs the symmetry and twin_exact cases too (if next-call1.sh found the twin exact on
# main, the branch must give the twin's bytes as well); built with `tools/harness bundle bundle`; rm -rf bundle/golden; git rev-parse --short HEAD > bundle/COMMIT;
# var/bench_dense_main.xz: main's bench_dense (bazel build //tools/bench:bench_dense on main).
# Expected: the same bytes on every case (the special-value edges compare NaN and infinity
# positions exactly; out_sha256 equal on the A/B rows), time within noise (the thirtieth
# session's switch R: 50.69 against 50.91 us at decode 32K, H100). Merge only if every step passes.
#  1. the arm's cases (*wgmma*: the edges, san_exact_alloc*, ninf_run, symmetry, twin_exact);
#  2. A/B, 3 rounds alternating, against main's bench_dense;
#  3. the GPU tier with benchmarks and the goals table;
#  4. memcheck and racecheck on the arm's cases of call 1 (and its exact allocations) and attn_shake's.
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
timeout 60 bin/tc_attn_gpu_test --jobs 8 --filter '*/*wgmma*' > $D/w/tc.log 2>&1; st "tc_attn *wgmma*" $?
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
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 bin/tc_attn_gpu_test --jobs 1 --filter '*@(__wgmma|ninf_run_exact_q__*|san_exact_alloc*wgmma)' > $D/w/san-$tool-tc.log 2>&1; st "$tool tc_attn" $?
  timeout 40 compute-sanitizer --tool $tool --error-exitcode 3 bin/attn_shake_gpu_test --jobs 1 --filter '*wgmma*' > $D/w/san-$tool-shake.log 2>&1; st "$tool attn_shake wgmma" $?
done
cd $D/w
grep -E "Synthesis|FAIL" tc.log | tail -5
cat ab.md
tail -n 3 tier.log; head -n 12 goals.md 2>/dev/null
for f in san-*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Synthesis' $f | tr '\n' ' ')"; done
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/steps.txt w/ab.md .; rm -rf w
