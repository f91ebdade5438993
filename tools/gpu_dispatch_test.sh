#!/usr/bin/env bash
# The --gpus dispatcher and the --shard plumbing of run-gpu-tier.sh, without a GPU:
#   1. tools/gpu_dispatch.sh on fake GPU ids: the GPU list (N, all from CUDA_VISIBLE_DEVICES,
#      all from a fake nvidia-smi, none), CUDA_VISIBLE_DEVICES / MLA_GPU set per job as
#      placement.tsv records it, never two jobs on one GPU at once (each fake job holds a
#      per-GPU marker), more than one GPU busy at once, exit statuses kept, the shared default;
#      in_shard over a plan: every job (and a job missing from the plan) in exactly one shard.
#   2. run-gpu-tier.sh end to end on a fake bundle (fake Criterion binaries and fuzzers that
#      write JUnit XML and record where they ran): --gpus 3 puts the GPU in each JUnit report
#      and in summary-gpu.json's `where`; --shard I/3 for I = 0..2 runs every job exactly once;
#      --merge of the three gives the unsharded run's counts and honours the ledger.
set -uo pipefail
TOOLS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$TOOLS/testlib.sh"
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/gpu_dispatch_test.XXXXXX")
trap 'rm -rf "$T"' EXIT
unset CUDA_VISIBLE_DEVICES MLA_GPU MLA_GPU_SLOT

# A fake job: NAME SECONDS [EXIT]. Records "NAME CUDA_VISIBLE_DEVICES MLA_GPU MLA_GPU_SLOT FOO
# start end"; with FAKE_EXCLUSIVE=1 it holds FAKE_DIR/busy.<gpu> while it runs and notes an
# overlap when another job holds it.
cat > "$T/fakejob" << 'EOF'
#!/usr/bin/env bash
g=${CUDA_VISIBLE_DEVICES-unset}
if [ "${FAKE_EXCLUSIVE:-0}" = 1 ] && ! mkdir "$FAKE_DIR/busy.$g" 2> /dev/null; then
    echo "$1 on $g" >> "$FAKE_DIR/overlaps"
fi
s=$(date +%s%N)
sleep "$2"
e=$(date +%s%N)
[ "${FAKE_EXCLUSIVE:-0}" = 1 ] && rmdir "$FAKE_DIR/busy.$g" 2> /dev/null
echo "$1 $g ${MLA_GPU-unset} ${MLA_GPU_SLOT-unset} ${FOO-unset} $s $e" >> "$FAKE_DIR/ran"
exit "${3:-0}"
EOF
chmod +x "$T/fakejob"

# Largest number of intervals (columns 6, 7 of FILE) open at once.
max_overlap() {
    awk '{print $6, 1; print $7, -1}' "$1" | sort -k1,1n -k2,2n |
        awk '{c += $2; if (c > m) m = c} END {print m + 0}'
}

# ---- 1. the dispatcher ----------------------------------------------------------------------
(
    source "$TOOLS/gpu_dispatch.sh"
    gpu_dispatch_init 3 "$T/d1"
    [ "$GPU_IDS_LIST" = 0,1,2 ] && [ "$GPU_COUNT" -eq 3 ] && [ "$GPU_SHARED" -eq 0 ]
)
check "--gpus 3 without CUDA_VISIBLE_DEVICES: GPUs 0,1,2, one job each" $?
(
    source "$TOOLS/gpu_dispatch.sh"
    CUDA_VISIBLE_DEVICES=7,GPU-9a gpu_dispatch_init all "$T/d2"
    [ "$GPU_IDS_LIST" = 7,GPU-9a ] && [ "$GPU_COUNT" -eq 2 ]
)
check "--gpus all takes CUDA_VISIBLE_DEVICES's entries (ids or UUIDs)" $?
(
    source "$TOOLS/gpu_dispatch.sh"
    CUDA_VISIBLE_DEVICES=7,8,9 gpu_dispatch_init 2 "$T/d3"
    [ "$GPU_IDS_LIST" = 7,8 ]
)
check "--gpus 2 takes the first two of CUDA_VISIBLE_DEVICES" $?
mkdir -p "$T/fakebin"
cat > "$T/fakebin/nvidia-smi" << 'EOF'
#!/bin/sh
[ "$1" = -L ] || exit 9
for i in 0 1 2 3; do echo "GPU $i: NVIDIA H200 (UUID: GPU-$i)"; done
echo "  MIG 1g.18gb     Device  0: (UUID: MIG-0)"
EOF
chmod +x "$T/fakebin/nvidia-smi"
(
    source "$TOOLS/gpu_dispatch.sh"
    PATH="$T/fakebin:$PATH" gpu_dispatch_init all "$T/d4"
    [ "$GPU_IDS_LIST" = 0,1,2,3 ]
)
check "--gpus all counts nvidia-smi -L's GPU lines (4; MIG lines not counted)" $?
(
    source "$TOOLS/gpu_dispatch.sh"
    mkdir -p "$T/nosmi"
    printf '#!/bin/sh\nexit 9\n' > "$T/nosmi/nvidia-smi"
    chmod +x "$T/nosmi/nvidia-smi"
    PATH="$T/nosmi:$PATH" gpu_dispatch_init all "$T/d5" 2> /dev/null
    [ "$GPU_IDS_LIST" = 0 ] && [ "$GPU_SHARED" -eq 1 ]
)
check "--gpus all without a working nvidia-smi: one shared device" $?
(
    source "$TOOLS/gpu_dispatch.sh"
    ! gpu_dispatch_init 0 "$T/d6" 2> /dev/null && ! gpu_dispatch_init x "$T/d6" 2> /dev/null
)
check "--gpus 0 and --gpus x are refused" $?

# Twelve jobs on three fake GPUs; job j5 exits 3; one job is a shell function with FOO set.
mkdir -p "$T/r1"
(
    source "$TOOLS/gpu_dispatch.sh"
    export FAKE_DIR="$T/r1" FAKE_EXCLUSIVE=1
    CUDA_VISIBLE_DEVICES=10,11,12 gpu_dispatch_init all "$T/r1"
    as_function() { "$T/fakejob" "$@"; }
    pids=() names=()
    for i in $(seq 0 10); do
        rc=0
        [ "$i" -eq 5 ] && rc=3
        run_on_gpu "j$i" "$T/fakejob" "j$i" 0.3 "$rc" &
        pids+=($!) names+=("j$i")
    done
    FOO=bar run_on_gpu j11 as_function j11 0.3 &
    pids+=($!) names+=(j11)
    for k in "${!pids[@]}"; do
        wait "${pids[$k]}"
        echo "${names[$k]} $?" >> "$T/r1/status"
    done
)
n=$(wc -l < "$T/r1/ran")
check "every job ran once (12 of 12)" $((n != 12)) "ran $n"
[ ! -s "$T/r1/overlaps" ]
check "never two jobs on one GPU at once (per-GPU markers)" $? \
    "$(cat "$T/r1/overlaps" 2> /dev/null)"
ok=0
for g in 10 11 12; do
    grep "^[^ ]* $g " "$T/r1/ran" > "$T/r1/on$g"
    [ "$(max_overlap "$T/r1/on$g")" -le 1 ] || ok=1
done
check "never two jobs on one GPU at once (their start / end times)" $ok
m=$(max_overlap "$T/r1/ran")
check "several GPUs busy at once (up to 3; saw $m)" $((m < 2 || m > 3))
bad=$(awk '$2 != $3 || ($2 == "10" && $4 != 0) || ($2 == "11" && $4 != 1) ||
           ($2 == "12" && $4 != 2) || $2 !~ /^1[012]$/' "$T/r1/ran")
check "each job saw CUDA_VISIBLE_DEVICES = MLA_GPU = its slot's id" $([ -z "$bad" ]; echo $?) "$bad"
bad=$(awk -F'\t' 'NR == FNR {seen[$1] = $2; next} {split($0, c, " ")}
                  seen[c[1]] != c[2] {print c[1]}' "$T/r1/placement.tsv" "$T/r1/ran")
n=$(wc -l < "$T/r1/placement.tsv")
check "placement.tsv has each job with the GPU it saw" \
    $([ -z "$bad" ] && [ "$n" -eq 12 ]; echo $?) \
    "lines $n, differing: $bad"
grep -qx "j5 3" "$T/r1/status" && grep -qx "j4 0" "$T/r1/status" &&
    [ "$(awk -F'\t' '$1 == "j5" {print $6}' "$T/r1/placement.tsv")" = 3 ]
check "run_on_gpu returns the job's exit status and records it" $?
grep -q "^j11 .* bar " "$T/r1/ran"
check "a shell function runs through run_on_gpu with the caller's environment (FOO=bar)" $?

# GPU_JOBS_PER_DEVICE=2 (the sanitizer tier's steps): ten jobs on two GPUs, at most two per GPU.
mkdir -p "$T/r3"
(
    source "$TOOLS/gpu_dispatch.sh"
    export FAKE_DIR="$T/r3"
    CUDA_VISIBLE_DEVICES=4,5 gpu_dispatch_init all "$T/r3"
    for i in $(seq 0 9); do GPU_JOBS_PER_DEVICE=2 run_on_gpu "k$i" "$T/fakejob" "k$i" 0.4 & done
    wait
)
ok=0 seen=""
for g in 4 5; do
    grep "^[^ ]* $g " "$T/r3/ran" > "$T/r3/on$g"
    m=$(max_overlap "$T/r3/on$g") seen="$seen $g:$m"
    [ "$m" -eq 2 ] || ok=1
done
n=$(wc -l < "$T/r3/ran")
check "GPU_JOBS_PER_DEVICE=2: two jobs per GPU at once, never three (saw$seen; ran $n of 10)" \
    $([ "$ok" -eq 0 ] && [ "$n" -eq 10 ]; echo $?)

# The default (one GPU): jobs share the device at once, CUDA_VISIBLE_DEVICES untouched.
mkdir -p "$T/r2"
(
    source "$TOOLS/gpu_dispatch.sh"
    export FAKE_DIR="$T/r2"
    gpu_dispatch_init 1 "$T/r2"
    for i in 0 1 2; do run_on_gpu "s$i" "$T/fakejob" "s$i" 0.5 & done
    wait
)
m=$(max_overlap "$T/r2/ran")
check "--gpus 1 (default): jobs share the device at once (saw $m)" $((m != 3))
bad=$(awk '$2 != "unset" || $3 != "0"' "$T/r2/ran")
check "--gpus 1: CUDA_VISIBLE_DEVICES left as it was, GPU 0 recorded" \
    $([ -z "$bad" ]; echo $?) "$bad"

# in_shard: a plan of 23 jobs over 4 shards; a job missing from the plan lands in one shard.
for i in $(seq 1 23); do echo "job$i"; done > "$T/jobs.txt"
for i in 0 1 2 3; do
    (
        source "$TOOLS/gpu_dispatch.sh"
        mkdir -p "$T/sh$i"
        shard_init "$i/4" "$T/jobs.txt" "" "$T/sh$i" 2> /dev/null || exit 1
        for j in $(cat "$T/jobs.txt") not_planned_job; do
            if in_shard "$j" 2> /dev/null; then echo "$j"; fi
        done
    ) > "$T/in$i"
done
dups=$(cat "$T"/in[0-3] | sort | uniq -d)
all=$(cat "$T"/in[0-3] | sort | tr '\n' ' ')
want=$( (cat "$T/jobs.txt"; echo not_planned_job) | sort | tr '\n' ' ')
check "in_shard: every job in exactly one of 4 shards (a job not in the plan too)" \
    $([ -z "$dups" ] && [ "$all" = "$want" ]; echo $?) "dups: $dups"
(
    source "$TOOLS/gpu_dispatch.sh"
    in_shard anything && ! shard_init 4/4 "$T/jobs.txt" "" "$T/sh0" 2> /dev/null
)
check "in_shard without --shard: every job; --shard 4/4 refused" $?

# ---- 2. run-gpu-tier.sh on a fake bundle ----------------------------------------------------
B="$T/bundle"
mkdir -p "$B/bin" "$B/tools" "$B/fuzz/corpus/xf" "$B/fuzz/corpus/yf"
cp "$TOOLS/run-gpu-tier.sh" "$B/"
cp "$TOOLS/gpu_dispatch.sh" "$TOOLS/shard.py" "$TOOLS/summarize.py" "$TOOLS/shard_durations.json" \
    "$B/tools/"
echo fake > "$B/COMMIT"
tar -C "$T" -cJf "$B/lib.tar.xz" --files-from /dev/null
printf '#!/bin/sh\necho "no device: fake bundle"\nexit 1\n' > "$B/bin/gpu_probe"
echo "c_test/flaky  #99  a known failure (the ledger holds)" > "$B/known_failures.txt"
# A fake Criterion binary: 2 passed cases (c_test: one passes, one known failure; d_test: one
# skipped); writes $MLA_XML_OUTPUT like criterion_main.c and records where it ran.
cat > "$B/fake_criterion" << 'EOF'
#!/usr/bin/env bash
n=$(basename "$0" _test)
"$FAKE_JOB" "$(basename "$0")" 0.3 > /dev/null
# the environment tests/BUILD gives the test binaries (GOLDEN_ENV, custom_case_test's env)
echo "$n ${MLA_GOLDEN_DIR:-unset} ${MLA_REGRESSIONS_DIR:-unset}" >> "$FAKE_DIR/test-env"
{
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo '<testsuites name="Criterion Tests">'
    echo "  <testsuite name=\"$n\" tests=\"2\" failures=\"0\">"
    echo "    <testcase name=\"one\" status=\"PASSED\"></testcase>"
    case $n in
        c) echo "    <testcase name=\"flaky\" status=\"FAILED\"><failure/></testcase>" ;;
        d) echo "    <testcase name=\"two\" status=\"SKIPPED\"><skipped/></testcase>" ;;
        *) echo "    <testcase name=\"two\" status=\"PASSED\"></testcase>" ;;
    esac
    echo "  </testsuite>"
    echo "</testsuites>"
} > "$MLA_XML_OUTPUT"
EOF
printf '#!/bin/sh\nexec "$FAKE_JOB" "$(basename "$0")" 0.2\n' > "$B/fake_fuzzer"
chmod +x "$B/fake_criterion" "$B/fake_fuzzer" "$B/bin/gpu_probe"
for t in a b c d e; do ln -s ../fake_criterion "$B/bin/${t}_test"; done
for f in xf yf; do ln -s ../fake_fuzzer "$B/bin/${f}_fuzzer"; done
export FAKE_JOB="$T/fakejob" FAKE_EXCLUSIVE=1

mkdir -p "$T/e2e"
CUDA_VISIBLE_DEVICES=4,5,6 FAKE_DIR="$T/e2e" OUT="$T/e2e/out" \
    timeout 60 "$B/run-gpu-tier.sh" --gpus 3 > "$T/e2e/log" 2>&1
rc=$?
check "run-gpu-tier.sh --gpus 3: exit 0 (a known failure only)" $rc "$(tail -5 "$T/e2e/log")"
tail -n 1 "$T/e2e/log" | grep -qx "10 passed, 1 failed, 1 skipped"
check "run-gpu-tier.sh --gpus 3: closing line 10 passed, 1 failed, 1 skipped" $? \
    "$(tail -n 1 "$T/e2e/log")"
[ ! -s "$T/e2e/overlaps" ]
check "run-gpu-tier.sh --gpus 3: never two jobs on one GPU at once" $?
# H200 2026-12-01: custom_case_test failed on the GPU host because MLA_REGRESSIONS_DIR was unset
[ "$(wc -l < "$T/e2e/test-env")" -eq 5 ] && ! grep -qv " $B/golden $B/regressions\$" "$T/e2e/test-env"
check "run-gpu-tier.sh: every test binary gets tests/BUILD's environment (golden, regressions)" $? \
    "$(cat "$T/e2e/test-env")"
python3 - "$T/e2e" << 'EOF'
import json, sys, xml.etree.ElementTree as ET
d = sys.argv[1]
s = json.load(open(f"{d}/out/summary-gpu.json"))
ran = {l.split()[0]: l.split()[1] for l in open(f"{d}/ran")}
jobs = [f"{t}_test" for t in "abcde"] + ["xf_replay", "yf_replay"]
ran = {("xf_replay" if k == "xf_fuzzer" else "yf_replay" if k == "yf_fuzzer" else k): v
       for k, v in ran.items()}
assert sorted(s["where"]) == sorted(jobs), s["where"]
for j in jobs:
    assert str(s["where"][j]) == ran[j], (j, s["where"][j], ran[j])
    assert s["where"][j] in (4, 5, 6), s["where"]
    root = ET.parse(f"{d}/out/xml/{j}.xml").getroot()
    props = [p.get("value") for p in root.iter("property") if p.get("name") == "gpu"]
    assert props and all(p == ran[j] for p in props), (j, props)
assert sorted(s["durations"]) == sorted(jobs)
merged = ET.parse(f"{d}/out/junit-gpu.xml").getroot()
for ts in merged.iter("testsuite"):
    props = {p.get("name"): p.get("value") for p in ts.iter("property")}
    assert props.get("gpu") == str(s["where"][ts.get("name")]), ts.get("name")
EOF
check "--gpus 3: each job's GPU in its JUnit report, junit-gpu.xml and summary-gpu.json where" $?

# The same night in three shards, then merged.
for i in 0 1 2; do
    mkdir -p "$T/s$i"
    FAKE_DIR="$T/s$i" OUT="$T/s$i/out" timeout 60 "$B/run-gpu-tier.sh" --shard "$i/3" \
        > "$T/s$i/log" 2>&1
    check "run-gpu-tier.sh --shard $i/3: exit 0" $? "$(tail -3 "$T/s$i/log")"
done
dups=$(cat "$T"/s[0-2]/out/shard-jobs.txt | sort | uniq -d)
all=$(cat "$T"/s[0-2]/out/shard-jobs.txt | sort | tr '\n' ' ')
check "the three shards' plans cover the 7 jobs exactly once" \
    $([ -z "$dups" ] && [ "$all" = "a_test b_test c_test d_test e_test xf_replay yf_replay " ]
      echo $?) "$all"
ran=$(cat "$T"/s[0-2]/ran | awk '{print $1}' | sort | tr '\n' ' ')
check "each job ran in exactly one shard" \
    $([ "$ran" = "a_test b_test c_test d_test e_test xf_fuzzer yf_fuzzer " ]; echo $?) "$ran"
OUT="$T/merged" timeout 60 "$B/run-gpu-tier.sh" --expect 3 --merge "$T"/s[0-2]/out \
    > "$T/merge.log" 2>&1
check "run-gpu-tier.sh --merge: exit 0 (the one failure is in the ledger)" $? \
    "$(tail -5 "$T/merge.log")"
tail -n 1 "$T/merge.log" | grep -qx "10 passed, 1 failed, 1 skipped"
check "--merge: the unsharded run's closing line (10 passed, 1 failed, 1 skipped)" $? \
    "$(tail -n 1 "$T/merge.log")"
python3 - "$T" << 'EOF'
import json, sys
t = sys.argv[1]
m = json.load(open(f"{t}/merged/summary-gpu.json"))
u = json.load(open(f"{t}/e2e/out/summary-gpu.json"))
assert m["totals"] == u["totals"] and m["suites"] == u["suites"], (m["totals"], u["totals"])
assert sorted(x["shard"] for x in m["shards"]) == ["0/3", "1/3", "2/3"], m["shards"]
assert sorted(m["shard_of"]) == sorted(u["where"]), m["shard_of"]
assert [f["known"] for f in m["failed"]] == ["#99 a known failure (the ledger holds)"], m["failed"]
EOF
check "--merge: same suites and counts as the unsharded run, per-shard provenance" $?
rm "$T/s1/out/summary-gpu.json"
OUT="$T/merged2" timeout 60 "$B/run-gpu-tier.sh" --expect 3 --merge "$T"/s[0-2]/out \
    > "$T/merge2.log" 2>&1
check "--merge fails when a shard left no summary (it did not finish)" $(($? == 0))

# ---- 3. tools/slurm without Slurm: nightly.sbatch as a task would run it; submit.sh's calls --
S="$TOOLS/slurm"
bash -n "$S/nightly.sbatch" && bash -n "$S/submit.sh"
check "tools/slurm/nightly.sbatch and submit.sh parse" $?
mkdir -p "$T/n1"
unset CUDA_VISIBLE_DEVICES
FAKE_DIR="$T/n1" SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=3 NIGHTLY_BUNDLE="$B" \
    NIGHTLY_RUN_DIR="$T/night" PATH="$T/nosmi:$PATH" timeout 60 bash "$S/nightly.sbatch" \
    --filter '[ab]_test' > "$T/n1/log" 2>&1
rc=$?
s=$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(s["shard"])' \
    "$T/night/shard-1/summary-gpu.json" 2> /dev/null)
check "nightly.sbatch (task 1 of 3): run-gpu-tier.sh --shard 1/3 into RUN_DIR/shard-1" \
    $([ "$rc" -eq 0 ] && [ "$s" = 1/3 ]; echo $?) "exit $rc, shard '$s': $(tail -3 "$T/n1/log")"
[ -z "$(ls "$B" | grep -x out)" ] && grep -q "exit 0 after" "$T/n1/log"
check "nightly.sbatch runs a private copy of the bundle (the bundle stays untouched)" $?
SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=3 NIGHTLY_BUNDLE="$B" NIGHTLY_RUN_DIR="$T/night" \
    NIGHTLY_PAYLOAD='echo "$NIGHTLY_SHARD|$NIGHTLY_SHARD_INDEX|$NIGHTLY_SHARDS|$OUT|$*|$PWD" \
    > "$NIGHTLY_RUN_DIR/payload"; exit 5' timeout 60 bash "$S/nightly.sbatch" a "b c" \
    > "$T/n1/log2" 2>&1
rc=$?
IFS='|' read -r sh si sn so sa sp < "$T/night/payload"
check "NIGHTLY_PAYLOAD replaces the runner (shard, OUT, arguments, status)" \
    $([ "$rc" -eq 5 ] && [ "$sh|$si|$sn|$so|$sa" = "2/3|2|3|$T/night/shard-2|a b c" ] &&
      [ "$sp" != "$B" ] && [ ! -e "$sp" ]; echo $?) "exit $rc: $(cat "$T/night/payload")"

# submit.sh against a fake sbatch: the array, its GPUs, the afterany merge.
mkdir -p "$T/fakeslurm"
cat > "$T/fakeslurm/sbatch" << 'EOF'
#!/usr/bin/env bash
n=$(($(cat "$FAKE_SLURM/n" 2> /dev/null || echo 100) + 1))
echo "$n" > "$FAKE_SLURM/n"
printf '%s\n' "$@" > "$FAKE_SLURM/call$n"
echo "$NIGHTLY_BUNDLE|$NIGHTLY_RUN_DIR|$NIGHTLY_SHARDS" > "$FAKE_SLURM/env$n"
echo "$n;cluster"
EOF
chmod +x "$T/fakeslurm/sbatch"
out=$(FAKE_SLURM="$T/fakeslurm" PATH="$T/fakeslurm:$PATH" "$S/submit.sh" --shards 4 \
    --bundle "$B" --run-dir "$T/night2" -- --fuzz-seconds 60 --sanitize)
a="$T/fakeslurm/call101" m="$T/fakeslurm/call102"
grep -qx -- "--array=0-3" "$a" && grep -qx -- "--gres=gpu:1" "$a" &&
    [ "$(tail -n 4 "$a" | tr '\n' ' ')" = "$S/nightly.sbatch --fuzz-seconds 60 --sanitize " ] &&
    [ "$(cat "$T/fakeslurm/env101")" = "$B|$T/night2|4" ] &&
    grep -qx -- "--output=$T/night2/logs/shard-%a.log" "$a"
check "submit.sh: an array 0-3 of nightly.sbatch, one GPU per task, the runner's arguments" $? \
    "$(tr '\n' ' ' < "$a")"
w="OUT='$T/night2/merged' '$B/run-gpu-tier.sh' --expect 4 --merge '$T/night2/shard-0'"
w+=" '$T/night2/shard-1' '$T/night2/shard-2' '$T/night2/shard-3'"
grep -qx -- "--dependency=afterany:101" "$m" && grep -qxF -- "--wrap=$w" "$m" &&
    [ "$out" = "array 101"$'\n'"merge 102"$'\n'"run-dir $T/night2" ]
check "submit.sh: then the merge of the 4 shard dirs, after any end of the array" $? \
    "$(tr '\n' ' ' < "$m") / $out"
FAKE_SLURM="$T/fakeslurm" PATH="$T/fakeslurm:$PATH" "$S/submit.sh" --shards 2 --no-gpu \
    --cpus 1 --bundle "$B" --run-dir "$T/night3" > /dev/null
grep -qx -- "--gres=none" "$T/fakeslurm/call103" && grep -qx -- "--array=0-1" \
    "$T/fakeslurm/call103" && grep -qx -- "1" "$T/fakeslurm/call103"
check "submit.sh --no-gpu --cpus 1: --gres=none (overrides the script's gpu:1), 1 CPU" $?
finish
