#!/bin/bash
# Thirty-second session, call 8: bundle of main at 25ba843, plus var/: branch combine-split's
# (653cfc4) tc_attn_gpu_test, dense_gpu_goldens_test and bench_dense. About 350 s of budget.
#  - on an H200: the GPU tier with benchmarks and the goals table (main), then the A/B below;
#  - on an H100 (the tier on 7f839c3 ran in call 4): the branch's correctness (tc_attn_gpu_test
#    whole: the twin cases follow the new combine order; the attn_absorbed / attn_gathered golden
#    cases of every arm, within class) and the A/B.
# A/B: main's bench_dense against the branch's, BENCH_ONLY "attn_absorbed decode" (every arm at
# decode 32K, 8K, 128K), 3 rounds alternating. Expected (written before): the combine 7.5 ->
# ~4-5 us at decode 32K, so the door row -2 to -3 us on the H100; rows under 64 chunks the same
# bytes; from 64 chunks out_sha256 differs (another order of the same adds, within class).
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
for f in var/*.xz; do xz -d $f; done; chmod +x var/*_new
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT var/COMMIT_NEW > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  OUT=$R/bundle/out timeout 200 ./run-gpu-tier.sh --parallel --bench --jobs 4 > $D/w/tier.log 2>&1; st tier $?
  cp out/goals.md out/bench-*.json out/peer-torch.json out/summary-gpu.json $D/w/ 2>/dev/null
  cp out/goals.md $D/ 2>/dev/null; tail -n 16 $D/w/tier.log > $D/tier-tail.txt
  tar -czf $D/w/tier-logs.tar.gz out/logs out/*.log out/*.md 2>/dev/null
else
  timeout 100 var/tc_attn_gpu_test_new --jobs 8 > $D/w/tc-new.log 2>&1; st "tc_attn (branch)" $?
  timeout 90 var/dense_gpu_goldens_test_new --jobs 8 --filter '*/*__attn_absorbed*' > $D/w/dense-new.log 2>&1; st "dense goldens attn_absorbed (branch)" $?
fi
cp bin/bench_dense var/bd_main; cp var/bench_dense_new var/bd_new
for r in 1 2 3; do
  for v in main new; do
    MLA_BENCH_JSON=$D/w/$v-$r.json BENCH_ONLY="attn_absorbed decode" timeout 40 var/bd_$v > $D/w/$v-$r.md 2>$D/w/$v-$r.err; st "bench $v $r" $?
  done
done
(cd $D/w && python3 - > $D/w/ab.md) <<'PY'
import json
def rows(f):
    d = json.load(open(f))
    if isinstance(d, dict): d = next(v for v in d.values() if isinstance(v, list))
    return {(r["kernel"] + " " + r["shape"] + " " + (r.get("arm") or r.get("note") or "")): (r["median_us"], r.get("out_sha256")) for r in d}
vs = ["main", "new"]
R = {(v, r): rows(f"{v}-{r}.json") for v in vs for r in (1, 2, 3)}
print("| row | main | new | bytes |")
print("| --- | ---: | ---: | --- |")
for k in R[("main", 1)]:
    cells = []
    for v in vs:
        t = sorted(R[(v, r)][k][0] for r in (1, 2, 3))
        cells.append(f"{t[1]:.2f} ({t[0]:.2f}-{t[2]:.2f})")
    same_main = all(R[("main", r)][k][1] == R[("main", 1)][k][1] for r in (1, 2, 3))
    same_new = all(R[("new", r)][k][1] == R[("new", 1)][k][1] for r in (1, 2, 3))
    eq = R[("new", 1)][k][1] == R[("main", 1)][k][1]
    print(f"| {k} | " + " | ".join(cells) + f" | {'equal' if eq else 'differ'}{'' if same_main and same_new else ' (run to run!)'} |")
PY
st ab $?
cd $D/w
grep -E "Synthesis|\[FAIL\]" tc-new.log dense-new.log 2>/dev/null | head -12
tail -n 3 tier.log 2>/dev/null; cat goals.md 2>/dev/null
cat ab.md
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/ab.md . 2>/dev/null; rm -rf w
