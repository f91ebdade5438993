#!/bin/bash
# Thirty-third session, call 5: bundle of main with tc_attn's one_chunk_{5,13}_heads cases (COMMIT),
# plus var/: branch combine-vec2's (COMMIT_NEW) tc_attn_gpu_test, dense_gpu_goldens_test,
# decode_split_gpu_test and bench_dense.
#  1. main: the new one_chunk cases on every arm, plain;
#  2. the branch: correctness (tc_attn whole: the twin cases state the combine to the bit; the
#     attention golden cases of every arm; decode_split), then the A/B: main's bench_dense against
#     the branch's, BENCH_ONLY "attn_absorbed decode", 3 rounds alternating, and ncu of the
#     branch's combine at decode 32K (call 3 measured main's: 7.65 us, a warp issuing every 3.64
#     cycles). Expected (written before): the same out_sha256 on every row (each column's chains
#     unchanged); the combine's instructions about 5x fewer, so it near its memory time (~3-4 us);
#     the door row at decode 32K 2-4 us faster, every other arm's decode rows faster too;
#  3. main: the wgmma single-chunk store guards one head long (9c535ba7e0 ha <=, 777ce0d2b2 ha + 1,
#     94a422e561 hb <=, 3050879202 hb + 1; survivors of call 3) under the wgmma cases; expected
#     killed (ha at 5 heads, hb at 13: the guard band written); memcheck of the one_chunk cases.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
tar -xJf relink.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
for f in var/*.xz; do xz -d $f; done; chmod +x var/*_new
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT var/COMMIT_NEW > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
timeout 60 bin/tc_attn_gpu_test --jobs 8 --filter '*/one_chunk*' > $D/w/one-chunk.log 2>&1; st "one_chunk plain (main)" $?
timeout 100 var/tc_attn_gpu_test_new --jobs 12 > $D/w/tc-new.log 2>&1; st "tc_attn whole (branch)" $?
timeout 100 var/dense_gpu_goldens_test_new --jobs 12 --filter '*/*__attn_*' > $D/w/dense-new.log 2>&1; st "dense goldens attn_* (branch)" $?
timeout 60 var/decode_split_gpu_test_new --jobs 8 > $D/w/split-new.log 2>&1; st "decode_split (branch)" $?
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
BENCH_ONLY="attn_absorbed decode TC door: wgmma" timeout 40 ncu --cache-control none --clock-control none \
  --kernel-name regex:"attn_combine" --launch-skip 2 --launch-count 1 --section SpeedOfLight \
  --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
  --section MemoryWorkloadAnalysis var/bd_new > $D/w/ncu-combine-new.txt 2>&1; st "ncu combine (branch)" $?
timeout 120 python3 tools/mutate.py run --bundle . --ids 9c535ba7e0,777ce0d2b2,94a422e561,3050879202 \
  --checks '^tc_attn_gpu_test --filter=\*/\*wgmma\*$' \
  --jobs 4 --timeout 80 --deadline 90 --grace 20 --prime-baselines \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st mutate $?
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 bin/tc_attn_gpu_test --jobs 4 --filter '*/one_chunk*' > $D/w/one-chunk-memcheck.log 2>&1; st "one_chunk memcheck (main)" $?
cd $D/w
grep -E "Synthesis|\[FAIL\]" one-chunk.log tc-new.log dense-new.log split-new.log one-chunk-memcheck.log | head -12
grep -E "ERROR SUMMARY" one-chunk-memcheck.log | tail -1
cat ab.md
grep -E "attn_combine|Duration|L2 Cache Throughput|Achieved Occupancy|Active Warps Per Scheduler|Eligible Warps|Issued Warp|Registers Per|Warp Cycles Per Issued" ncu-combine-new.txt | head -12
sed -n '/Score per file/,/Survivors/p' mutate/mutation-report.md | grep "^| kernels" | cut -c1-200
sed -n '/Killed: by which/,/Where the time/p' mutate/mutation-report.md | grep "^| [0-9a-f]" | cut -c1-240
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/ab.md . 2>/dev/null; rm -rf w
