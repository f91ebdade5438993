#!/usr/bin/env bash
# run-gpu-tier.sh: the GPU tier on a CUDA host without Bazel (packed by tools/harness bundle).
#
#   ./run-gpu-tier.sh [--fuzz-seconds N] [--sanitize] [--bench] [--filter GLOB] [--jobs N]
#                     [--parallel] [--gpus N|all] [--shard I/N [--durations FILE]]
#                     [--rebuild kernels/FILE.cu ...]   (docs/relink.md: relink-only loop)
#   ./run-gpu-tier.sh [--expect N] --merge SHARD_OUT_DIR...
#   ./run-gpu-tier.sh --nightly [--budget MINUTES] [--history FILE] [--gpus N|all] [--mutate N] ...
#     (--mutate N: a sampled mutate pass of N mutants after the benchmarks, its score in the
#      ledger; MUTATE_TIMEOUT, default 600 s; docs/mutation.md)
#
# --nightly (docs/nightly.md) plans the night within --budget MINUTES (default 60) of wall time:
# the tests and corpus replays, the sanitizer tier, the benchmarks, then fuzzing for the rest of
# the budget (each target of the serial layout gets an equal share, at least 10 s, else fuzzing
# is skipped with a note; an explicit --fuzz-seconds N wins), with a progress line per section
# (nightly-sections.tsv). It clears the previous run's reports from $OUT first (not the history),
# then tools/ledger.py records the run, appends the record to --history FILE (default
# $MLA_HISTORY, else $OUT/history.jsonl) and reports against the previous record
# ($OUT/ledger-report.md); the exit status is the report's: 0 clean, 1 a failure the ledger does
# not list, 2 a kernel slower beyond noise, 3 an infrastructure problem. Not with --shard/--merge.
# --gpus N|all spreads the jobs over the visible GPUs, one job per GPU at a time
# (CUDA_VISIBLE_DEVICES per job; all = CUDA_VISIBLE_DEVICES's entries or `nvidia-smi -L`; default
# 1: every job shares device 0, as before); summary-gpu.json's `where` says where each job ran.
# --shard I/N runs shard I's share of the night's jobs (tools/shard.py plan, balanced by the
# durations of --durations FILE: default tools/shard_durations.json, or a previous
# summary-gpu.json); --merge merges the shards' out dirs into one summary in $OUT (tools/shard.py
# merge; --expect N: every shard 0..N-1 must be there) and exits non-zero on any new failure.
# tools/slurm/ runs the shards as a Slurm job array.
#
# Runs every Criterion test binary (GPU suites run; CPU suites run too), the fuzz corpus
# replays, each GPU fuzzer for N seconds (default 0: skipped), compute-sanitizer (memcheck,
# racecheck, initcheck, synccheck) over the GPU test binaries' fixture cases (--sanitize), and
# the benchmarks (--bench). Logs, JUnit XML and summary-gpu.json go to $OUT (default ./out).
# Prints the summary table last; exits non-zero on any failure that the known-failure ledger
# (known_failures.txt, from tests/known_failures.txt; each entry names its issue) does not list.
set -uo pipefail
cd "$(dirname "$0")"
HERE=$PWD
FUZZ_SECONDS=0 SANITIZE=0 BENCH=0 FILTER='*' JOBS=4 PARALLEL=0
GPUS=1 SHARD="" DURATIONS=$HERE/tools/shard_durations.json EXPECT="" MERGE=0 MERGE_DIRS=()
NIGHTLY=0 BUDGET_MIN="" HISTORY="" FUZZ_SET=0 REBUILD=() MUTATE_N=0
# A path the caller gave, relative to the caller's directory (OLDPWD: the cd above).
caller_path() { case $1 in /*) echo "$1" ;; *) echo "${OLDPWD:-$HERE}/$1" ;; esac; }
while [ $# -gt 0 ]; do
    case "$1" in
        --fuzz-seconds) FUZZ_SECONDS=$2; FUZZ_SET=1; shift 2 ;;
        --nightly) NIGHTLY=1; shift ;;
        --budget) BUDGET_MIN=$2; shift 2 ;;
        --history) HISTORY=$(caller_path "$2"); shift 2 ;;
        --sanitize) SANITIZE=1; shift ;;
        --bench) BENCH=1; shift ;;
        --filter) FILTER=$2; shift 2 ;;
        --jobs) JOBS=$2; shift 2 ;;
        --parallel) PARALLEL=1; shift ;;
        --gpus) GPUS=$2; shift 2 ;;
        --rebuild) REBUILD+=("$(caller_path "$2")"); shift 2 ;;
        --mutate) MUTATE_N=$2; shift 2 ;;
        --shard) SHARD=$2; shift 2 ;;
        --durations) DURATIONS=$(caller_path "$2"); shift 2 ;;
        --expect) EXPECT=$2; shift 2 ;;
        --merge) MERGE=1; shift
            for d in "$@"; do MERGE_DIRS+=("$(caller_path "$d")"); done
            set -- ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ "$NIGHTLY" -eq 1 ]; then # tests, sanitizer tier, benchmarks, fuzzing; then the ledger
    if [ -n "$SHARD" ] || [ "$MERGE" -eq 1 ]; then
        echo "--nightly does not take --shard or --merge (yet)" >&2; exit 2
    fi
    BUDGET_MIN=${BUDGET_MIN:-60} SANITIZE=1 BENCH=1 PARALLEL=1 # test binaries at once (H200 2026-12-01: serial took 201 s of a 9-minute night)
    case $BUDGET_MIN in '' | *[!0-9]* | 0) echo "--budget takes whole minutes >= 1" >&2; exit 2 ;; esac
elif [ -n "$BUDGET_MIN$HISTORY" ] || [ "$MUTATE_N" != 0 ]; then
    echo "--budget, --history and --mutate go with --nightly" >&2; exit 2
fi
case $MUTATE_N in '' | *[!0-9]*) echo "--mutate takes a number of mutants" >&2; exit 2 ;; esac
if [ "$MERGE" -eq 1 ]; then # one summary over the shards' out dirs; nothing runs here
    [ ${#MERGE_DIRS[@]} -gt 0 ] || { echo "--merge needs the shards' out dirs" >&2; exit 2; }
    exec python3 tools/shard.py merge --out "${OUT:-$HERE/out}" \
        --known-failures known_failures.txt ${EXPECT:+--expect "$EXPECT"} "${MERGE_DIRS[@]}"
fi
OUT=${OUT:-$HERE/out}
if [ "$NIGHTLY" -eq 1 ]; then # tonight's reports only (the history stays)
    rm -rf "$OUT/xml" "$OUT/logs" "$OUT/repro" "$OUT/census" "$OUT"/fuzz-* "$OUT"/bench-*.json \
        "$OUT"/summary-gpu.json "$OUT"/sanitize-report.* "$OUT/nightly-sections.tsv" "$OUT/mutate" \
        "$OUT/ledger-record.json" "$OUT/ledger-report.md" "$OUT/ledger-report.html" "$OUT/corpus-delta"
fi
mkdir -p "$OUT/lib"
tar -C "$OUT" -xJf lib.tar.xz
[ -d bin ] || tar -xJf bin.tar.xz # the binaries travel compressed (tools/bundle.sh)
# --rebuild FILE.cu (repeatable): the relink-only loop (docs/relink.md): recompile the patched
# kernel sources with the Bazel build's nvcc flags and relink every binary that uses them with
# the host's g++, then run the tier as usual on the relinked binaries. A failed compile or link
# stops here (exit 3), the old binaries untouched.
if [ ${#REBUILD[@]} -gt 0 ]; then
    [ -d relink ] || tar -xJf relink.tar.xz
    t_rb=$SECONDS
    python3 relink/relink.py --bundle "$HERE" --libdir "$OUT/lib" "${REBUILD[@]}" ||
        { echo "gpu-tier: --rebuild failed (above); nothing ran" >&2; exit 3; }
    echo "gpu-tier: rebuilt ${REBUILD[*]} in $((SECONDS - t_rb)) s"
fi
export LD_LIBRARY_PATH="$OUT/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export MLA_GOLDEN_DIR="$HERE/golden"
export MLA_REGRESSIONS_DIR="$HERE/regressions" # custom_case_test parses and runs them (tests/BUILD)
mkdir -p "$OUT/xml" "$OUT/logs" "$OUT/repro"
export FUZZ_REPRO_DIR="$OUT/repro"
# The oracle cache (tests/lib/case.h): each golden check loads its case's oracle context
# instead of recomputing it (a whole case per check); fresh per run, removed at exit.
# MLA_ORACLE_CACHE=off in the environment keeps every check computing its own oracle.
if [ "${MLA_ORACLE_CACHE:-}" = off ]; then
    unset MLA_ORACLE_CACHE
else
    export MLA_ORACLE_CACHE="$OUT/oracle-cache"
    rm -rf "$MLA_ORACLE_CACHE" && mkdir -p "$MLA_ORACLE_CACHE"
    trap 'rm -rf "$OUT/oracle-cache"' EXIT
fi

probe=$(bin/gpu_probe) || true
echo "gpu-tier: $probe (commit $(cat COMMIT))"

# --nightly's sections: a progress line each (elapsed / budget), and nightly-sections.tsv
# (section, start s, end s, note) for the ledger record.
NIGHT_SECTION="" NIGHT_T0=0 NIGHT_NOTE=""
mmss() { local s=$1 sign=""; [ "$s" -ge 0 ] || { sign=-; s=$((-s)); }; printf '%s%d:%02d' "$sign" $((s / 60)) $((s % 60)); }
night_section() { # NAME [NOTE]: closes the open section and opens NAME ("": closes only)
    [ "$NIGHTLY" -eq 1 ] || return 0
    [ -z "$NIGHT_SECTION" ] || printf '%s\t%d\t%d\t%s\n' "$NIGHT_SECTION" "$NIGHT_T0" "$SECONDS" \
        "$NIGHT_NOTE" >> "$OUT/nightly-sections.tsv"
    NIGHT_SECTION=$1 NIGHT_T0=$SECONDS NIGHT_NOTE=${2:-}
    [ -n "$1" ] || return 0
    echo "nightly: $1 -- elapsed $(mmss "$SECONDS") of the $(mmss $((BUDGET_MIN * 60))) budget," \
        "$(mmss $((BUDGET_MIN * 60 - SECONDS))) left${2:+ ($2)}"
}

# A JUnit file for a non-Criterion step: name, status (0 = pass), seconds, log file.
junit_step() {
    local name=$1 rc=$2 secs=$3 log=$4 msg=""
    [ "$rc" -ne 0 ] && msg=$(tail -n 20 "$log" | tr -d '\000-\010\013\014\016-\037' | sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/"/\&quot;/g')
    {
        echo '<?xml version="1.0" encoding="UTF-8"?>'
        echo "<testsuites><testsuite name=\"$name\" tests=\"1\">"
        # Where it ran (run_on_gpu sets MLA_GPU: tools/gpu_dispatch.sh).
        [ -z "${MLA_GPU:-}" ] ||
            echo "<properties><property name=\"gpu\" value=\"$MLA_GPU\"/></properties>"
        echo "<testcase classname=\"$name\" name=\"$name\" time=\"$secs\">"
        [ "$rc" -ne 0 ] && echo "<failure message=\"exit $rc\">$msg</failure>"
        echo "</testcase></testsuite></testsuites>"
    } > "$OUT/xml/$name.xml"
}

step() { # name, command...
    local name=$1; shift
    local t0=$SECONDS rc=0
    "$@" > "$OUT/logs/$name.log" 2>&1 || rc=$?
    junit_step "$name" "$rc" $((SECONDS - t0)) "$OUT/logs/$name.log"
    printf '%-48s %s (%ds)\n' "$name" "$([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)")" $((SECONDS - t0))
    return 0
}

# Where the jobs run and which run here. tools/gpu_dispatch.sh (its header has the API):
# `run_on_gpu NAME CMD...` runs CMD on a free GPU of --gpus (one job per GPU) and records where;
# `in_shard NAME` says whether job NAME (its JUnit step name) is this shard's (--shard I/N).
# Every section goes through both (sanitize_all: several steps per GPU, GPU_JOBS_PER_DEVICE).
source tools/gpu_dispatch.sh
gpu_dispatch_init "$GPUS" "$OUT" || exit 2
# The sanitizer tier's case sets, `binary<TAB>filter<TAB>key` lines, from the set's one reader
# (tools/sanitize_report.py --list: the key is binary.part for a row with a part); with
# SANITIZE_FILTER one a binary (its parts would repeat the same filter), keyed by the binary.
sanitize_sets() {
    python3 tools/sanitize_report.py --set tools/sanitize_set.tsv --list \
        ${SANITIZE_FILTER:+--one-per-binary}
}
night_jobs() { # every job of the night by its step name: the same list on every shard
    local t f b sets
    for t in bin/*_test; do
        [ -e "$t" ] || continue
        case "$(basename "$t")" in $FILTER) basename "$t" ;; esac
    done
    for t in regressions/*.json; do # the shrunk regression cases (step regression_<name>)
        [ -e "$t" ] || continue
        b=regression_$(basename "$t" .json)
        case "$b" in $FILTER) echo "$b" ;; esac
    done
    for f in bin/*_fuzzer; do
        [ -e "$f" ] || continue
        b=$(basename "$f" _fuzzer)
        echo "${b}_replay"
        if [ "$FUZZ_SECONDS" -gt 0 ]; then echo "fuzz_$b"; fi
    done
    if [ "$SANITIZE" -eq 1 ]; then # sanitize_all's jobs: one per case set (binary[.part])
        sets=$(sanitize_sets 2> /dev/null | cut -f1,3 | tr '\t' ' ')
        if [ -z "$sets" ]; then sets=$(cd bin && ls -- *gpu*_test | sed 's/.*/& &/'); fi
        while read -r b key; do
            if [ -n "$b" ] && [ -x "bin/$b" ]; then echo "sanitize_$key"; fi
        done <<< "$sets"
    fi
    if [ "$BENCH" -eq 1 ]; then for b in bin/bench_*; do [ ! -e "$b" ] || basename "$b"; done; fi
}
if [ -n "$SHARD" ]; then
    night_jobs > "$OUT/shard-jobs-all.txt"
    shard_init "$SHARD" "$OUT/shard-jobs-all.txt" "$DURATIONS" "$OUT" \
        --set "fuzz_*=$FUZZ_SECONDS" || exit 2
    echo "gpu-tier: shard $SHARD: $(wc -l < "$SHARD_MINE_FILE") of" \
        "$(wc -l < "$SHARD_ALL_FILE") jobs ($SHARD_MINE_FILE)"
fi
if [ "$GPU_SHARED" -eq 0 ]; then
    echo "gpu-tier: $GPU_COUNT GPUs ($GPU_IDS_LIST), one job per GPU at a time"
fi

# 1. Criterion test binaries (their own JUnit XML); --parallel runs the binaries at once (so does
#    --gpus N > 1: the dispatcher bounds them to one per GPU).
night_section "tests and corpus replays"
run_test_binary() {
    local t=$1 name t0 rc gpu prop
    name=$(basename "$t")
    t0=$SECONDS
    MLA_XML_OUTPUT="$OUT/xml/$name.xml" "$t" --jobs "$JOBS" > "$OUT/logs/$name.log" 2>&1
    rc=$?
    printf '%-48s %s (%ds)\n' "$name" "$([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)")" \
        $((SECONDS - t0))
    # A crash that left no report is still a failure.
    [ -s "$OUT/xml/$name.xml" ] || junit_step "$name" 99 $((SECONDS - t0)) "$OUT/logs/$name.log"
    # Where it ran: a JUnit property of each test suite of the report.
    gpu=$(printf '%s' "${MLA_GPU:-}" | tr -cd 'A-Za-z0-9._:-')
    prop="<properties><property name=\"gpu\" value=\"$gpu\"/></properties>"
    [ -z "$gpu" ] || sed -i "s|^\( *<testsuite [^>]*[^/]\)>\$|\1>$prop|" "$OUT/xml/$name.xml"
    return $rc
}
pids=()
for t in bin/*_test; do
    [ -e "$t" ] || continue
    name=$(basename "$t")
    case "$name" in $FILTER) ;; *) continue ;; esac
    in_shard "$name" || continue
    if [ "$PARALLEL" -eq 1 ] || [ "$GPU_SHARED" -eq 0 ]; then
        run_on_gpu "$name" run_test_binary "$t" & pids+=($!)
    else
        run_on_gpu "$name" run_test_binary "$t"
    fi
done
for p in "${pids[@]}"; do wait "$p"; done

# 1b. Shrunk regression cases (tools/shrink.py -> tests/regressions/*.json, bundled under
#     regressions/): each runs its suite's custom case (<suite>/custom__<check>, $MLA_CUSTOM_CASE)
#     as one step regression_<name>; a failing one fails the run like any test.
regression_case() { # json: tools/shrink.py --replay (its own JUnit report, so a skip without
    # a GPU is reported as skipped, never as a pass)
    local r=$1 name t0 rc=0
    name=regression_$(basename "$r" .json)
    t0=$SECONDS
    python3 tools/shrink.py --replay "$r" --bin bin --xml "$OUT/xml/$name.xml" \
        > "$OUT/logs/$name.log" 2>&1 || rc=$?
    printf '%-48s %s (%ds)\n' "$name" "$([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)")" \
        $((SECONDS - t0))
    [ -s "$OUT/xml/$name.xml" ] || junit_step "$name" "${rc/#0/98}" $((SECONDS - t0)) "$OUT/logs/$name.log"
    return 0
}
for r in regressions/*.json; do
    [ -e "$r" ] || continue
    name=regression_$(basename "$r" .json)
    case "$name" in $FILTER) ;; *) continue ;; esac
    in_shard "$name" || continue
    run_on_gpu "$name" regression_case "$r"
done

# 2. Fuzz corpus replays: each GPU fuzzer runs its committed corpus once (-runs=0), under ASan
#    (at once with --gpus N > 1, one per GPU).
replay() { # target, fuzzer
    ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 \
        step "${1}_replay" "$2" -runs=0 -artifact_prefix="$OUT/repro/" "fuzz/corpus/$1"
}
pids=()
for f in bin/*_fuzzer; do
    [ -e "$f" ] || continue # a bundle without fuzzers (tools/slurm_test.sh's CPU bundle)
    name=$(basename "$f"); target=${name%_fuzzer}
    in_shard "${target}_replay" || continue
    if [ "$GPU_SHARED" -eq 0 ]; then
        run_on_gpu "${target}_replay" replay "$target" "$f" & pids+=($!)
    else
        run_on_gpu "${target}_replay" replay "$target" "$f"
    fi
done
for p in "${pids[@]}"; do wait "$p"; done

# 3. GPU fuzzing (libFuzzer + ASan; CUDA needs protect_shadow_gap=0). Each target runs W worker
#    processes (libFuzzer -jobs=W -workers=W: one job per worker for FUZZ_SECONDS, all sharing the
#    target's corpus directory, which each reloads, and the GPU). FUZZ_WORKERS (default: nproc)
#    workers in all; FUZZ_LAYOUT=serial (default: one target after another, each with all of
#    them, so the step takes targets x FUZZ_SECONDS) or parallel (every target at once, the
#    workers split between them). Serial, because the GPU time-slices its processes and each
#    execution waits its turn once: a target's rate grows with its share of the workers, and the
#    total is the same (docs/fuzzing.md). With several GPUs (--gpus) the targets go one per GPU
#    at a time, the workers split between those running. Prints per target: executions and
#    exec/s summed over the workers, coverage (cov / ft, the best worker's), the corpus's files
#    before -> after; one JUnit case per target.
fuzz_one() { # fuzzer, workers: runs one target, writes its log, summary line and JUnit case
    local f=$1 w=$2 target work out t0 t1 ms rc=0 opts=() n0 n1 stats st execs cov ft l
    target=$(basename "$f" _fuzzer)
    out=$(cd "$OUT" && pwd)
    work="$out/fuzz-$target"
    rm -rf "$work" && mkdir -p "$work/corpus"
    cp -r "fuzz/corpus/$target/." "$work/corpus/" 2> /dev/null || true
    [ -f "fuzz/$target.options" ] && mapfile -t opts < <(grep -v '^#' "fuzz/$target.options" |
        grep -v '^\s*$' | sed 's/^/-/; s/ *= */=/')
    n0=$(find "$work/corpus" -type f | wc -l)
    t0=$(date +%s%N)
    (cd "$work" && ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 FUZZ_REPRO_DIR="$out/repro" \
        "$HERE/$f" "${opts[@]}" -jobs="$w" -workers="$w" -max_total_time="$FUZZ_SECONDS" \
        -print_final_stats=1 -artifact_prefix="$out/repro/" corpus) \
        > "$out/logs/fuzz_$target.log" 2>&1 || rc=$?
    t1=$(date +%s%N)
    n1=$(find "$work/corpus" -type f | wc -l)
    # The new inputs, for `tools/harness corpus-merge` (docs/nightly.md): corpus-delta/<target>/
    # and its count in corpus-delta/<target>.count (the summary line stays as ledger.py reads it).
    mkdir -p "$out/corpus-delta"
    [ ! -f tools/corpus_delta.sh ] || bash tools/corpus_delta.sh "fuzz/corpus/$target" \
        "$work/corpus" "$out/corpus-delta/$target" > "$out/corpus-delta/$target.count" || true
    # Summed over the workers' logs (fuzz-J.log): executions; cov / ft of the best worker.
    stats=$(awk 'FNR == 1 && NR > 1 { fin() }
        function fin() { if (c > C) C = c; if (f > F) F = f; c = f = 0 }
        /stat::number_of_executed_units:/ { e += $2 }
        / cov: [0-9]+ ft: [0-9]+/ { for (i = 1; i < NF; i++) {
            if ($i == "cov:") c = $(i + 1); if ($i == "ft:") f = $(i + 1) } }
        END { fin(); printf "%d %d %d", e, C, F }' "$work"/fuzz-*.log 2> /dev/null)
    read -r execs cov ft <<< "${stats:-0 0 0}"
    st=$([ "$rc" -eq 0 ] && echo ok || echo "FAILED (exit $rc)")
    ms=$(((t1 - t0) / 1000000)) && [ "$ms" -gt 0 ] || ms=1
    printf '%-48s %s (%d workers: %d executions in %.1f s = %d exec/s; cov %d ft %d; %s)\n' \
        "fuzz_$target" "$st" "$w" "$execs" "${ms}e-3" $((execs * 1000 / ms)) "$cov" "$ft" \
        "corpus $n0 -> $n1 files" > "$out/logs/fuzz_$target.summary"
    { # the report of every worker that found something, then the summary (JUnit's tail)
        for l in "$work"/fuzz-*.log; do
            grep -qE '^==[0-9]+==ERROR|FUZZ_ASSERT|FUZZ testbed|deadly signal|runtime error:' \
                "$l" && { echo "---- $(basename "$l")"; tail -n 60 "$l"; }
        done
        cat "$out/logs/fuzz_$target.summary"
    } >> "$out/logs/fuzz_$target.log"
    junit_step "fuzz_$target" "$rc" $((ms / 1000)) "$out/logs/fuzz_$target.log"
    return "$rc"
}
fuzz_all() {
    local f targets=() n conc cores layout base extra i w p pids=() t0=$SECONDS
    # Heaviest executions first: they get the spare workers of an uneven split.
    for f in bin/split_invariance_fuzzer bin/ring_residency_fuzzer bin/score_identity_fuzzer \
        bin/select_order_fuzzer bin/gathered_indices_fuzzer bin/rope_positions_fuzzer \
        bin/*_fuzzer; do
        [ -e "$f" ] || continue
        case " ${targets[*]} " in *" $f "*) continue ;; esac
        in_shard "fuzz_$(basename "$f" _fuzzer)" || continue
        targets+=("$f")
    done
    n=${#targets[@]}
    [ "$n" -gt 0 ] || return 0
    cores=${FUZZ_WORKERS:-$(nproc)} layout=${FUZZ_LAYOUT:-serial}
    if [ "${GPU_SHARED:-1}" -eq 1 ] && [ "$layout" = serial ]; then
        for f in "${targets[@]}"; do
            run_on_gpu "fuzz_$(basename "$f" _fuzzer)" fuzz_one "$f" "$cores"
        done
    else
        conc=$n
        [ "${GPU_SHARED:-1}" -eq 0 ] && [ "${GPU_COUNT:-1}" -lt "$n" ] && conc=$GPU_COUNT
        base=$((cores / conc)) extra=$((cores % conc))
        for i in "${!targets[@]}"; do
            w=$((base + (i % conc < extra ? 1 : 0)))
            [ "$w" -ge 1 ] || w=1
            run_on_gpu "fuzz_$(basename "${targets[$i]}" _fuzzer)" fuzz_one "${targets[$i]}" \
                "$w" & pids+=($!)
        done
        for p in "${pids[@]}"; do wait "$p"; done
    fi
    for f in "${targets[@]}"; do cat "$OUT/logs/fuzz_$(basename "$f" _fuzzer).summary"; done
    echo "fuzz: $n targets, $cores workers ($layout), $FUZZ_SECONDS s each," \
        "wall $((SECONDS - t0)) s"
}

# 4. The sanitizer tier: compute-sanitizer's memcheck, racecheck, initcheck and synccheck over
#    every GPU test binary, each on its small case set (tools/sanitize_set.tsv: san_* cases that
#    reach every kernel arm), SANITIZE_JOBS (default 12) jobs at a time, SANITIZE_TIMEOUT (default
#    420 s) each. A binary whose rows carry a part name (the set's third column) runs one step per
#    part (sanitize_<tool>_<binary>.<part>), so that a growing case set is split before a step
#    reaches the timeout. First a kernel census of each case set (ncu, clocks untouched: which
#    kernels launch, with their shared memory), so the report (sanitize-report.md / .json) lists
#    per tool the kernels it covered and any shared-memory kernel racecheck missed, each step's
#    slowest cases (Criterion's XML, OUT/cases/) and the steps that passed near their timeout.
#    SANITIZE_FILTER replaces every binary's filter (a narrower run: one step a binary).
sanitize_all() {
    local CS NCU bin filter key tool s jobs=${SANITIZE_JOBS:-12} t0=$SECONDS running=0
    local timeout=${SANITIZE_TIMEOUT:-420}
    CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    mkdir -p "$OUT/census" "$OUT/cases"
    local sets=()
    while IFS=$'\t' read -r bin filter key; do
        [ -x "bin/$bin" ] || continue
        in_shard "sanitize_$key" || continue
        sets+=("$bin"$'\t'"${SANITIZE_FILTER:-$filter}"$'\t'"$key")
    done < <(sanitize_sets)
    for t in bin/*gpu*_test; do # every GPU test binary must have a case set
        grep -q "^$(basename "$t")"$'\t' tools/sanitize_set.tsv ||
            step "sanitize_set_$(basename "$t")" false
    done
    # The census runs beside the sanitizer steps, one bounded job per binary (ncu attaches to
    # every test process, a second or so each, so one binary after another took 431 s): the
    # first launch of each kernel per test process (--kernel-id :::1), two launch metrics,
    # clocks untouched. With --gpus N the jobs spread over the GPUs (run_on_gpu),
    # ceil(SANITIZE_JOBS / N) per GPU. Census jobs first: they are the longest.
    census_one() { # bin filter key
        timeout "$timeout" "$NCU" --clock-control none --target-processes all \
            --kernel-id :::1 --csv --print-units base \
            --metrics launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static \
            "bin/$1" --jobs 1 --filter "$2" > "$OUT/census/$3.csv" 2>&1 || true
    }
    local per=$(((jobs + ${GPU_COUNT:-1} - 1) / ${GPU_COUNT:-1})) s_jobs=()
    for s in "${sets[@]}"; do s_jobs+=("census"$'\t'"$s"); done
    for s in "${sets[@]}"; do
        for tool in memcheck racecheck initcheck synccheck; do s_jobs+=("$tool"$'\t'"$s"); done
    done
    for s in "${s_jobs[@]}"; do
        tool=${s%%$'\t'*} s=${s#*$'\t'}
        bin=${s%%$'\t'*} s=${s#*$'\t'}
        filter=${s%%$'\t'*} key=${s#*$'\t'}
        while [ "$running" -ge "$jobs" ]; do wait -n; running=$((running - 1)); done
        if [ "$tool" = census ]; then
            GPU_JOBS_PER_DEVICE=$per run_on_gpu "sanitize_census_${key}" \
                census_one "$bin" "$filter" "$key" &
        else
            GPU_JOBS_PER_DEVICE=$per run_on_gpu "sanitize_${tool}_${key}" \
                step "sanitize_${tool}_${key}" timeout "$timeout" "$CS" \
                --tool "$tool" --error-exitcode 1 --target-processes all "bin/$bin" --jobs 1 \
                --filter "$filter" --xml="$OUT/cases/sanitize_${tool}_${key}.xml" &
        fi
        running=$((running + 1))
    done
    wait
    echo "sanitize: tier wall $((SECONDS - t0)) s"
    python3 tools/sanitize_report.py --set tools/sanitize_set.tsv --census "$OUT/census" \
        --xml "$OUT/xml" --logs "$OUT/logs" --cases "$OUT/cases" --timeout "$timeout" \
        --wall $((SECONDS - t0)) --out "$OUT" || true
}
# 5. Benchmarks (MLA_BENCH_JSON: where a benchmark may write its medians as JSON for the ledger,
#    OUT/bench-<name>.json: a list of {kernel, shape, arm, median_us, p10_us, p90_us}).
bench_all() {
    for b in bin/bench_*; do
        in_shard "$(basename "$b")" || continue # --shard: each benchmark runs in one shard
        MLA_BENCH_JSON="$OUT/bench-$(basename "$b" | sed 's/^bench_//').json" \
            run_on_gpu "$(basename "$b")" step "$(basename "$b")" "$b"
        cp "$OUT/logs/$(basename "$b").log" "$OUT/"
    done
    # The PyTorch peer in the same run (tools/bench/torch_peer.py): measured when the host's
    # python3 has torch and sees the device, else it says so ("peer: not measured (...)"); its
    # composites are first checked against golden cases. OUT/peer-torch.json, not bench-*.json:
    # the ledger compares this project's kernels night over night, not the peer.
    if [ -f tools/bench/torch_peer.py ] && in_shard torch_peer; then
        run_on_gpu torch_peer step torch_peer python3 tools/bench/torch_peer.py \
            --json "$OUT/peer-torch.json" --self-check golden --ours "$OUT"/bench-*.json
        cp "$OUT/logs/torch_peer.log" "$OUT/"
        tail -n 30 "$OUT/logs/torch_peer.log"
    fi
    # The goals of the issue "Ahead of the PyTorch peer", from this run's JSON alone
    # (tools/bench/goals.py): OUT/goals.md and OUT/goals.json; a goal without its row is "not
    # measured".
    if [ -f tools/bench/goals.py ] && ls "$OUT"/bench-*.json > /dev/null 2>&1; then
        peer=()
        [ -f "$OUT/peer-torch.json" ] && peer=(--peer "$OUT/peer-torch.json")
        python3 tools/bench/goals.py --ours "$OUT"/bench-*.json "${peer[@]}" \
            --md "$OUT/goals.md" --json "$OUT/goals.json" || true
    fi
}
# --nightly: the fuzzers get what is left of the budget after the benchmarks, an equal share per
# target of the layout's rounds (serial on one GPU: one target after another), less a reserve for
# the libFuzzer start of each target and the summary (NIGHTLY_RESERVE, default 30 s + 5 s a
# target); less than 10 s a target skips fuzzing with a note.
nightly_fuzz_seconds() {
    local n=0 f rounds conc left
    for f in bin/*_fuzzer; do [ ! -e "$f" ] || n=$((n + 1)); done
    [ "$n" -gt 0 ] || { NIGHT_FUZZ_NOTE="no fuzz target in the bundle"; FUZZ_SECONDS=0; return; }
    rounds=$n
    if [ "${FUZZ_LAYOUT:-serial}" != serial ] || [ "${GPU_SHARED:-1}" -eq 0 ]; then
        conc=$n
        [ "${GPU_SHARED:-1}" -eq 0 ] && [ "${GPU_COUNT:-1}" -lt "$n" ] && conc=$GPU_COUNT
        rounds=$(((n + conc - 1) / conc))
    fi
    left=$((BUDGET_MIN * 60 - SECONDS - ${NIGHTLY_RESERVE:-$((30 + 5 * rounds))}))
    FUZZ_SECONDS=$((left / rounds))
    if [ "$FUZZ_SECONDS" -lt 10 ]; then
        NIGHT_FUZZ_NOTE="skipped: $((left > 0 ? left : 0)) s of the budget left for $n targets"
        NIGHT_FUZZ_NOTE+=" in $rounds rounds (under 10 s each)"
        FUZZ_SECONDS=0
    else
        NIGHT_FUZZ_NOTE="$n targets, $FUZZ_SECONDS s each in $rounds rounds"
    fi
}
if [ "$NIGHTLY" -eq 1 ]; then # tests (above), the sanitizer tier, the benchmarks, the fuzzers
    night_section "sanitizer tier"
    sanitize_all
    night_section benchmarks
    bench_all
    if [ "$MUTATE_N" -gt 0 ]; then # a sampled mutate pass (docs/mutation.md), seeded by the date
        night_section mutation "$MUTATE_N mutants, seed $(date -u +%Y%m%d)"
        [ -d relink ] || tar -xJf relink.tar.xz
        step mutate timeout "${MUTATE_TIMEOUT:-600}" python3 tools/mutate.py run --bundle "$HERE" \
            --libdir "$OUT/lib" --sample "$MUTATE_N" --seed "$(date -u +%Y%m%d)" \
            --jobs "${MUTATE_JOBS:-$(nproc)}" --deadline $((${MUTATE_TIMEOUT:-600} * 2 / 3)) \
            --grace $((${MUTATE_TIMEOUT:-600} / 4)) \
            --out "$OUT/mutate"
    fi
    if [ "$FUZZ_SET" -eq 0 ]; then
        nightly_fuzz_seconds
    else
        NIGHT_FUZZ_NOTE="--fuzz-seconds $FUZZ_SECONDS"
    fi
    night_section fuzzing "$NIGHT_FUZZ_NOTE"
    [ "$FUZZ_SECONDS" -gt 0 ] && fuzz_all
    night_section summary
else
    # The sanitizer tier first (bounded, timed on its own), then the fuzzers with every core.
    [ "$SANITIZE" -eq 1 ] && sanitize_all
    [ "$FUZZ_SECONDS" -gt 0 ] && fuzz_all
    [ "$BENCH" -eq 1 ] && bench_all
fi

# The summary: where each job ran (placement.tsv, the `where` map) and, with --shard, which shard.
reports=("$OUT"/xml/*.xml)
[ -e "${reports[0]}" ] || reports=() # a shard may have no job at all
notes=(--note "GPU tier: $probe")
[ "$GPU_SHARED" -eq 1 ] ||
    notes+=(--note "GPUs: $GPU_COUNT ($GPU_IDS_LIST), one job per GPU at a time")
if [ -n "$SHARD" ]; then
    n_mine=$(wc -l < "$SHARD_MINE_FILE") n_all=$(wc -l < "$SHARD_ALL_FILE")
    notes+=(--shard "$SHARD" --note "shard $SHARD on $GPU_HOST: $n_mine of $n_all jobs")
fi
python3 tools/summarize.py --out "$OUT" --tier gpu --known-failures known_failures.txt \
    --placement "$OUT/placement.tsv" "${notes[@]}" "${reports[@]}"
rc=$?
[ "$NIGHTLY" -eq 1 ] || exit "$rc"

# --nightly: the ledger (tools/ledger.py): record the run, append it to the history, report
# against the previous record; the report's exit status is the run's (3 when the ledger fails).
night_section ledger
HISTORY=${HISTORY:-${MLA_HISTORY:-$OUT/history.jsonl}}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -n 1)
python3 tools/ledger.py record "$OUT" --commit "$(cat COMMIT)" --gpu "${gpu:-$probe}" \
    --budget-min "$BUDGET_MIN" --bundle "$HERE" -o "$OUT/ledger-record.json" &&
    python3 tools/ledger.py append "$HISTORY" "$OUT/ledger-record.json" || {
    echo "nightly: the ledger could not record this run (exit 3)" >&2
    exit 3
}
python3 tools/ledger.py report "$HISTORY" --known-failures known_failures.txt \
    --md "$OUT/ledger-report.md" --html "$OUT/ledger-report.html"
rc=$?
night_section ""
echo "nightly: done in $(mmss "$SECONDS") of the $(mmss $((BUDGET_MIN * 60))) budget;" \
    "history $HISTORY, report $OUT/ledger-report.md (page: ledger-report.html), exit $rc"
exit "$rc"
