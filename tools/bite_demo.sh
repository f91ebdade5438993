#!/usr/bin/env bash
# tools/bite_demo.sh: the "fixtures that bite" demonstration (docs/fixtures-that-bite.md).
# Each bite is a deliberately wrong kernel variant behind `--define=mla_bite=<NAME>` (kernels/BUILD
# adds -DMLA_BITE_<NAME> to nvcc; the #if blocks are in kernels/mla_attn.cu and mla_kpool.cu). It
# should PASS every old stored fixture and FAIL its new case. Never part of a product build.
#
#   tools/bite_demo.sh list
#       the bites, each with its new case
#   tools/bite_demo.sh build OUTDIR [NAME...]      (build host: needs Bazel and nvcc, no GPU)
#       for each bite: bazel build --define=mla_bite=NAME of the two GPU golden suites, copied to
#       OUTDIR/<test>__<NAME>; then a plain `bazel build` of the same targets, so bazel-bin holds
#       the product kernels again (a --define shares bazel-bin with the default build)
#   tools/bite_demo.sh run BINDIR [NAME...]        (GPU host, from the checkout root)
#       for each bite: each of its two binaries once on every stored case (BITE_JOBS runs at a
#       time, default 6), and a table "bite | new case: expected FAIL got ... | old cases (the
#       11 at 636aebb): expected PASS got ... | other new cases failing | verdict".
#   tools/bite_demo.sh table BINDIR LOGDIR [NAME...]   the table again from a run's logs
#       Fixtures: MLA_GOLDEN_DIR (default ./golden). On a bundle host (tools/bundle.sh) put the
#       bundle's lib/ on LD_LIBRARY_PATH. Exit 0 iff every bite did as expected.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

TESTS=(dense_gpu_goldens_test kpool_gpu_goldens_test)

# bite -> "<test binary> <suite> <new case>"
bite_new() {
    case "$1" in
    ATTN_NO_MAX) echo "dense_gpu_goldens_test dense_gpu glm5_peaked_verify" ;;
    GATHER_STOP_AT_PAD) echo "kpool_gpu_goldens_test kpool_gpu glm5_kpool_gather_edges" ;;
    GATHER_EMPTY_NAN) echo "kpool_gpu_goldens_test kpool_gpu glm5_kpool_gather_edges" ;;
    SELECT_NAN_FIRST) echo "kpool_gpu_goldens_test kpool_gpu glm5_kpool_select_special" ;;
    SELECT_POW2_POOL) echo "kpool_gpu_goldens_test kpool_gpu glm5_kpool_pool7_notail" ;;
    SELECT_NO_MASK) echo "kpool_gpu_goldens_test kpool_gpu glm5_next_kpool_mask" ;;
    SELECT_TAIL_WARP) echo "kpool_gpu_goldens_test kpool_gpu glm5_next_kpool_pool64" ;;
    ATTN_NAN_AS_MASK) echo "dense_gpu_goldens_test dense_gpu glm5_tp8_nonfinite" ;;
    ATTN_SATURATE_F16) echo "dense_gpu_goldens_test dense_gpu glm5_next_large_latent" ;;
    SPLIT_FTZ) echo "dense_gpu_goldens_test dense_gpu glm5_tp8_nonfinite" ;;
    POOL_KEYS_NO_MAX) echo "kpool_gpu_goldens_test kpool_gpu glm5_next_kpool_gate" ;;
    SELECT_TIE_FLIP) echo "kpool_gpu_goldens_test kpool_gpu glm5_next_kpool_smallint" ;;
    SELECT_SAMPLED_NO_TAIL) echo "kpool_gpu_goldens_test kpool_gpu glm5_kpool_sampled" ;;
    *) return 1 ;;
    esac
}
# bite -> the GPU checks whose kernel code it changes (the run filters on them: the other checks
# run product code, identical with and without the bite; BITE_ALL_CHECKS=1 runs every check)
bite_checks() {
    case "$1" in
    ATTN_* | GATHER_*) echo "attn_absorbed attn_gathered" ;; # mla_attn.cu's walk and combine
    SELECT_*) echo "select" ;;                               # mla_kpool.cu's selects
    SPLIT_FTZ) echo "split_latent" ;;                        # mla_dense.cu's split copy
    POOL_KEYS_NO_MAX) echo "pool_keys" ;;                    # mla_kpool.cu's pool keys
    *) return 1 ;;
    esac
}
check_suite() { case "$1" in attn_absorbed | split_latent | absorb_q | decompress_v | rope | append_latent) echo dense_gpu ;; *) echo kpool_gpu ;; esac; }
ALL_BITES=(ATTN_NO_MAX GATHER_STOP_AT_PAD GATHER_EMPTY_NAN SELECT_NAN_FIRST SELECT_POW2_POOL
    SELECT_NO_MASK SELECT_TAIL_WARP ATTN_NAN_AS_MASK ATTN_SATURATE_F16 SPLIT_FTZ POOL_KEYS_NO_MAX
    SELECT_TIE_FLIP SELECT_SAMPLED_NO_TAIL)

# The old fixtures: the 11 cases stored at 636aebb, the gentle set the issue "Fixtures that bite"
# measured (every other stored case was added under that issue). A bite must pass all of them.
OLD_DENSE=(glm5_decode glm5_verify glm5_prefill glm5_rope_maxpos glm5_next_decode glm5_next_verify)
OLD_KPOOL=(glm5_kpool_decode glm5_kpool_verify glm5_next_kpool_decode glm5_next_kpool_verify
    glm5_next_kpool_ring)

usage() {
    sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

cmd=${1:-}
[ -n "$cmd" ] || usage
shift

bites_from_args() {
    if [ $# -eq 0 ]; then
        echo "${ALL_BITES[@]}"
        return
    fi
    local b
    for b in "$@"; do
        bite_new "$b" >/dev/null || {
            echo "bite_demo: unknown bite '$b' (tools/bite_demo.sh list)" >&2
            exit 2
        }
    done
    echo "$@"
}

case "$cmd" in
list)
    for b in "${ALL_BITES[@]}"; do
        read -r _ suite case_ <<<"$(bite_new "$b")"
        printf '%-20s %s/%s\n' "$b" "$suite" "$case_"
    done
    ;;
build)
    [ $# -ge 1 ] || usage
    OUT=$1
    shift
    read -ra BITES <<<"$(bites_from_args "$@")"
    mkdir -p "$OUT"
    OUT=$(cd "$OUT" && pwd)
    cd "$ROOT"
    targets=()
    for t in "${TESTS[@]}"; do targets+=("//tests:$t"); done
    rc=0
    for b in "${BITES[@]}"; do
        echo "== bite $b: bazel build --define=mla_bite=$b" >&2
        if ! bazel build --define=mla_bite="$b" //kernels:all "${targets[@]}"; then
            echo "bite_demo: build of $b failed" >&2
            rc=1
            continue
        fi
        for t in "${TESTS[@]}"; do
            rm -f "$OUT/${t}__$b"
            cp "bazel-bin/tests/$t" "$OUT/${t}__$b"
        done
    done
    echo "== restoring the default build in bazel-bin" >&2
    bazel build //kernels:all "${targets[@]}" || rc=1
    ls -l "$OUT" >&2
    exit $rc
    ;;
run | table)
    [ $# -ge 1 ] || usage
    BIN=$1
    shift
    if [ "$cmd" = table ]; then # the table again from an earlier run's logs
        [ $# -ge 1 ] || usage
        LOG=$1
        shift
    fi
    read -ra BITES <<<"$(bites_from_args "$@")"
    BIN=$(cd "$BIN" && pwd)
    cd "$ROOT"
    export MLA_GOLDEN_DIR=${MLA_GOLDEN_DIR:-$ROOT/golden}
    LOG=${LOG:-${BITE_LOG_DIR:-$(mktemp -d)}}
    mkdir -p "$LOG"
    JOBS=${BITE_JOBS:-6}
    # every stored case (golden/manifest.json): the old ones, each bite's new case, and the
    # other new cases, so the table also says which other new cases catch the bite
    mapfile -t ALL_CASES < <(python3 -c 'import json, sys
for c in json.load(open(sys.argv[1]))["cases"]: print(c["name"])' "$MLA_GOLDEN_DIR/manifest.json")
    [ ${#ALL_CASES[@]} -gt 0 ] || {
        echo "bite_demo: no case in $MLA_GOLDEN_DIR/manifest.json" >&2
        exit 2
    }

    # One Criterion run per (bite, binary): --filter on every stored case in one extglob,
    # `<suite>/@(a|b|...)__*` (the cases of the other suite match nothing); the verdict per case
    # comes from its [PASS] / [FAIL] lines. BITE_JOBS runs at a time (default 6), each with
    # BITE_CRITERION_JOBS Criterion workers (default 4): one GPU, the host's cores.
    # suite_checks BITE SUITE: the bite's checks in that suite, '|'-separated ('*' with
    # BITE_ALL_CHECKS=1; empty: the bite changes no kernel that suite checks)
    suite_checks() {
        if [ "${BITE_ALL_CHECKS:-0}" = 1 ]; then
            echo '*'
            return
        fi
        local c out=()
        for c in $(bite_checks "$1"); do [ "$(check_suite "$c")" = "$2" ] && out+=("$c"); done
        (
            IFS='|'
            echo "${out[*]}"
        )
    }
    # affected SUITE CHECKS: the stored cases with a stage among CHECKS ('|'-separated; '*': all)
    affected() {
        python3 -c 'import json, sys
checks = set(sys.argv[2].split("|"))
for c in json.load(open(sys.argv[1]))["cases"]:
    stages = {o.get("stage") for o in c["outputs"].values()}
    if "*" in checks or stages & checks: print(c["name"])' "$MLA_GOLDEN_DIR/manifest.json" "$2"
    }
    run_bin() { # bite binary-basename suite
        local pat checks
        checks=$(suite_checks "$1" "$3")
        [ -n "$checks" ] || return 0 # no kernel of this suite's checks changed: product code
        pat=$(
            IFS='|'
            echo "${ALL_CASES[*]}"
        )
        local flt="$3/@($pat)__@($checks)"
        [ "$checks" = '*' ] && flt="$3/@($pat)__*"
        "$BIN/${2}__$1" --verbose --jobs="${BITE_CRITERION_JOBS:-4}" --filter="$flt" \
            >"$LOG/${1}__$2.log" 2>&1
        echo $? >"$LOG/${1}__$2.rc"
    }
    # case_verdict LOGFILE SUITE CASE: PASS (every test of the case passed, >= 1 ran), FAIL
    # (one failed or crashed), NOTRUN (none ran: no GPU, not in this suite, or no log)
    case_verdict() {
        local clean
        [ -f "$1" ] || {
            echo NOTRUN
            return
        }
        clean=$(sed 's/\x1b\[[0-9;]*m//g' "$1")
        if grep -q "^\[FAIL\] $2::$3__" <<<"$clean"; then
            echo FAIL
        elif grep -q "^\[PASS\] $2::$3__" <<<"$clean"; then
            echo PASS
        else
            echo NOTRUN
        fi
    }
    suite_of() { [ "$1" = dense_gpu_goldens_test ] && echo dense_gpu || echo kpool_gpu; }

    if [ "$cmd" = run ]; then
        running=0
        for b in "${BITES[@]}"; do
            [ -x "$BIN/dense_gpu_goldens_test__$b" ] && [ -x "$BIN/kpool_gpu_goldens_test__$b" ] ||
                continue
            echo "== bite $b: running ${TESTS[*]} on the stored cases of its checks" \
                "($(bite_checks "$b"); BITE_ALL_CHECKS=1: every check)" >&2
            for t in "${TESTS[@]}"; do
                run_bin "$b" "$t" "$(suite_of "$t")" &
                running=$((running + 1))
                if [ "$running" -ge "$JOBS" ]; then
                    wait -n
                    running=$((running - 1))
                fi
            done
        done
        wait
    fi

    all_ok=0
    rows=()
    for b in "${BITES[@]}"; do
        read -r nt suite case_ <<<"$(bite_new "$b")"
        if [ ! -x "$BIN/dense_gpu_goldens_test__$b" ] || [ ! -x "$BIN/kpool_gpu_goldens_test__$b" ]; then
            rows+=("$b | missing binaries in $BIN (tools/bite_demo.sh build) | | | NOT-as-expected")
            all_ok=1
            continue
        fi
        got_new=$(case_verdict "$LOG/${b}__$nt.log" "$suite" "$case_")
        n_old=0 n_pass=0 bad_old="" also=""
        for t in "${TESTS[@]}"; do
            s=$(suite_of "$t")
            checks=$(suite_checks "$b" "$s")
            [ -n "$checks" ] || continue # this suite ran product code only: not part of the bite
            mapfile -t aff < <(affected "$s" "$checks")
            if [ "$s" = dense_gpu ]; then olds=("${OLD_DENSE[@]}"); else olds=("${OLD_KPOOL[@]}"); fi
            for c in "${olds[@]}"; do
                [[ " ${aff[*]} " == *" $c "* ]] || continue # no stage of the bite's checks
                n_old=$((n_old + 1))
                g=$(case_verdict "$LOG/${b}__$t.log" "$s" "$c")
                if [ "$g" = PASS ]; then
                    n_pass=$((n_pass + 1))
                else
                    bad_old="$bad_old $c:$g"
                fi
            done
            for c in "${ALL_CASES[@]}"; do
                [ "$c" != "$case_" ] || continue
                [[ " ${olds[*]} " == *" $c "* ]] && continue
                [ "$(case_verdict "$LOG/${b}__$t.log" "$s" "$c")" = FAIL ] && also="$also $c"
            done
        done
        if [ "$n_pass" -eq "$n_old" ]; then
            got_old="PASS ($n_pass/$n_old cases)"
        elif [[ "$bad_old" == *:FAIL* ]]; then
            got_old="FAIL ($n_pass/$n_old passed;$bad_old)"
        else
            got_old="NOTRUN ($n_pass/$n_old passed;$bad_old)"
        fi
        verdict=as-expected
        if [ "$got_new" != FAIL ] || [ "$n_pass" -ne "$n_old" ]; then
            verdict=NOT-as-expected
            all_ok=1
        fi
        rows+=("$b | new case $case_: expected FAIL got $got_new | old cases: expected PASS got $got_old | other new cases failing:${also:- none} | $verdict")
    done
    echo
    echo "bite | new case: expected FAIL got ... | old cases (those of the 11 at 636aebb with a stage among the bite's checks): expected PASS got ... | other new cases failing | verdict"
    for r in "${rows[@]}"; do echo "$r"; done
    echo "(logs: $LOG)"
    exit $all_ok
    ;;
*) usage ;;
esac
