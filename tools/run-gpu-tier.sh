#!/usr/bin/env bash
# run-gpu-tier.sh: the GPU tier on a CUDA host without Bazel (packed by tools/harness bundle).
#
#   ./run-gpu-tier.sh [--fuzz-seconds N] [--sanitize] [--bench] [--filter GLOB] [--jobs N]
#                     [--parallel]
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
while [ $# -gt 0 ]; do
    case "$1" in
        --fuzz-seconds) FUZZ_SECONDS=$2; shift 2 ;;
        --sanitize) SANITIZE=1; shift ;;
        --bench) BENCH=1; shift ;;
        --filter) FILTER=$2; shift 2 ;;
        --jobs) JOBS=$2; shift 2 ;;
        --parallel) PARALLEL=1; shift ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
OUT=${OUT:-$HERE/out}
mkdir -p "$OUT/lib"
tar -C "$OUT" -xJf lib.tar.xz
[ -d bin ] || tar -xJf bin.tar.xz # the binaries travel compressed (tools/bundle.sh)
export LD_LIBRARY_PATH="$OUT/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export MLA_GOLDEN_DIR="$HERE/golden"
mkdir -p "$OUT/xml" "$OUT/logs" "$OUT/repro"
export FUZZ_REPRO_DIR="$OUT/repro"

probe=$(bin/gpu_probe) || true
echo "gpu-tier: $probe (commit $(cat COMMIT))"

# A JUnit file for a non-Criterion step: name, status (0 = pass), seconds, log file.
junit_step() {
    local name=$1 rc=$2 secs=$3 log=$4 msg=""
    [ "$rc" -ne 0 ] && msg=$(tail -n 20 "$log" | tr -d '\000-\010\013\014\016-\037' | sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/"/\&quot;/g')
    {
        echo '<?xml version="1.0" encoding="UTF-8"?>'
        echo "<testsuites><testsuite name=\"$name\" tests=\"1\">"
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

# 1. Criterion test binaries (their own JUnit XML); --parallel runs the binaries at once.
run_test_binary() {
    local t=$1 name t0 rc
    name=$(basename "$t")
    t0=$SECONDS
    MLA_XML_OUTPUT="$OUT/xml/$name.xml" "$t" --jobs "$JOBS" > "$OUT/logs/$name.log" 2>&1
    rc=$?
    printf '%-48s %s (%ds)\n' "$name" "$([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)")" $((SECONDS - t0))
    # A crash that left no report is still a failure.
    [ -s "$OUT/xml/$name.xml" ] || junit_step "$name" 99 $((SECONDS - t0)) "$OUT/logs/$name.log"
}
pids=()
for t in bin/*_test; do
    case "$(basename "$t")" in $FILTER) ;; *) continue ;; esac
    if [ "$PARALLEL" -eq 1 ]; then run_test_binary "$t" & pids+=($!); else run_test_binary "$t"; fi
done
for p in "${pids[@]}"; do wait "$p"; done

# 2. Fuzz corpus replays: each GPU fuzzer runs its committed corpus once (-runs=0), under ASan.
for f in bin/*_fuzzer; do
    name=$(basename "$f"); target=${name%_fuzzer}
    ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 \
        step "${target}_replay" "$f" -runs=0 -artifact_prefix="$OUT/repro/" "fuzz/corpus/$target"
done

# 3. GPU fuzzing (libFuzzer + ASan; CUDA needs protect_shadow_gap=0): every target at once, for
#    FUZZ_SECONDS each (small kernels share the device well), then one JUnit case per target.
fuzz_all() {
    pids=()
    for f in bin/*_fuzzer; do
        name=$(basename "$f"); target=${name%_fuzzer}
        work="$OUT/fuzz-$target"; mkdir -p "$work"
        cp -r "fuzz/corpus/$target/." "$work/" 2>/dev/null || true
        opts=()
        [ -f "fuzz/$target.options" ] && mapfile -t opts < <(grep -v '^#' "fuzz/$target.options" | grep -v '^\s*$' | sed 's/^/-/; s/ *= */=/')
        ( t0=$SECONDS; rc=0
          ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 "$f" "${opts[@]}" \
              -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 -artifact_prefix="$OUT/repro/" \
              "$work" > "$OUT/logs/fuzz_$target.log" 2>&1 || rc=$?
          junit_step "fuzz_$target" "$rc" $((SECONDS - t0)) "$OUT/logs/fuzz_$target.log" ) &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    for f in bin/*_fuzzer; do
        target=$(basename "$f"); target=${target%_fuzzer}
        runs=$(grep -E "stat::number_of_executed_units" "$OUT/logs/fuzz_$target.log" | awk '{print $2}')
        st=$(grep -q "<failure" "$OUT/xml/fuzz_$target.xml" && echo FAILED || echo ok)
        printf '%-48s %s (%s executions in %ss)\n' "fuzz_$target" "$st" "${runs:-?}" "$FUZZ_SECONDS"
    done
}

# 4. compute-sanitizer over the GPU suites (every tool must report 0 errors), concurrently with
#    the fuzzers above when both are asked for. SANITIZE_FILTER narrows the cases (Criterion
#    --filter glob); SANITIZE_TESTS the binaries (default: every *gpu* test binary).
sanitize_all() {
    local CS t name tool spids=()
    CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    for t in ${SANITIZE_TESTS:-bin/*gpu*_test}; do
        name=$(basename "$t")
        for tool in memcheck racecheck initcheck synccheck; do
            step "sanitize_${tool}_${name}" timeout "${SANITIZE_TIMEOUT:-300}" "$CS" --tool "$tool" \
                --error-exitcode 1 --target-processes all "$t" --jobs 1 \
                --filter "${SANITIZE_FILTER:-*}" &
            spids+=($!)
        done
    done
    for p in "${spids[@]}"; do wait "$p"; done
}
if [ "$FUZZ_SECONDS" -gt 0 ] && [ "$SANITIZE" -eq 1 ]; then
    fuzz_all & fpid=$!
    sanitize_all
    wait "$fpid"
elif [ "$FUZZ_SECONDS" -gt 0 ]; then
    fuzz_all
elif [ "$SANITIZE" -eq 1 ]; then
    sanitize_all
fi

# 5. Benchmarks.
if [ "$BENCH" -eq 1 ]; then
    for b in bin/bench_*; do
        step "$(basename "$b")" "$b"
        cp "$OUT/logs/$(basename "$b").log" "$OUT/"
    done
fi

python3 tools/summarize.py --out "$OUT" --tier gpu --known-failures known_failures.txt \
    --note "GPU tier: $probe" "$OUT"/xml/*.xml
