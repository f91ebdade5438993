# tools/gpu_dispatch.sh: one job per GPU at a time, and this shard's share of the night's jobs.
# Sourced by run-gpu-tier.sh (packed beside it as tools/gpu_dispatch.sh) and by its tests; needs
# bash 4.1+, flock (util-linux) when there is more than one GPU, python3 for shards.
#
#   gpu_dispatch_init SPEC DIR
#       SPEC: N or all (all = the entries of CUDA_VISIBLE_DEVICES when set, else the GPUs that
#       `nvidia-smi -L` lists, else 1). One GPU (the default) is today's behaviour: every job
#       may share it, nothing waits and CUDA_VISIBLE_DEVICES is left as it is. Truncates
#       DIR/placement.tsv; the slot locks live in DIR/.gpu-slots.
#   run_on_gpu NAME CMD...
#       Waits for a free GPU (one job per GPU; GPU_JOBS_PER_DEVICE=K, set for the call, allows K
#       jobs per GPU: the sanitizer tier's bounded steps), runs CMD (a command or a shell function; in a
#       subshell, so it cannot set the caller's variables) with CUDA_VISIBLE_DEVICES=<that GPU>,
#       MLA_GPU=<that GPU> and MLA_GPU_SLOT=<its index in the list>, then appends
#       "NAME<TAB>gpu<TAB>slot<TAB>host<TAB>seconds<TAB>exit" to DIR/placement.tsv and returns
#       CMD's status. It blocks: start it with & for concurrency, then wait. NAME is the job's
#       JUnit step name (the XML file's name, e.g. fuzz_rope_positions,
#       sanitize_memcheck_dense_gpu_goldens_test): summary-gpu.json's `where` map is keyed by it.
#       Example (fuzz_all):  run_on_gpu "fuzz_$target" fuzz_one "$f" & pids+=($!)
#       junit_step (run-gpu-tier.sh) records MLA_GPU as the JUnit property `gpu`.
#   shard_init I/N JOBS_FILE DURATIONS_FILE DIR [tools/shard.py plan options...]
#       Plans this shard (tools/shard.py plan, longest first by the recorded durations) from
#       JOBS_FILE (every job of the night, one name a line, the same on every shard).
#   in_shard NAME
#       Status 0 when job NAME is this shard's (always 0 without shard_init). A name that is not
#       in the plan is placed by its name's checksum, so it still runs in exactly one shard.
#       Example (sanitize_all):  in_shard "sanitize_${tool}_${name}" || continue

GPU_DISPATCH_TOOLS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GPU_COUNT=1 GPU_SHARED=1 GPU_IDS_LIST=0 GPU_SLOT_DIR="" GPU_PLACEMENT=/dev/null SHARD_SPEC=""
GPU_HOST=$(uname -n)

gpu_dispatch_init() { # SPEC (N | all), DIR
    local spec=${1:-1} dir=${2:?gpu_dispatch_init SPEC DIR} n ids=()
    case $spec in
        all) ;;
        '' | *[!0-9]* | 0)
            echo "gpu-dispatch: --gpus takes N >= 1 or all, not '$spec'" >&2
            return 2 ;;
    esac
    if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
        IFS=, read -r -a ids <<< "$CUDA_VISIBLE_DEVICES"
        if [ "$spec" != all ] && [ "$spec" -lt "${#ids[@]}" ]; then ids=("${ids[@]:0:$spec}"); fi
        if [ "$spec" != all ] && [ "$spec" -gt "${#ids[@]}" ]; then
            echo "gpu-dispatch: --gpus $spec but CUDA_VISIBLE_DEVICES lists ${#ids[@]}" >&2
        fi
    else
        n=$spec
        if [ "$spec" = all ]; then
            n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
            if [ "${n:-0}" -lt 1 ]; then
                echo "gpu-dispatch: --gpus all: nvidia-smi lists no GPU; one shared device" >&2
                n=1
            fi
        fi
        for ((i = 0; i < n; i++)); do ids+=("$i"); done
    fi
    GPU_COUNT=${#ids[@]}
    GPU_IDS_LIST=$(IFS=,; echo "${ids[*]}")
    GPU_SHARED=$((GPU_COUNT == 1 ? 1 : 0))
    mkdir -p "$dir/.gpu-slots" || return 2
    GPU_SLOT_DIR="$dir/.gpu-slots"
    GPU_PLACEMENT="$dir/placement.tsv"
    : > "$GPU_PLACEMENT"
    if [ "$GPU_SHARED" -eq 0 ] && ! command -v flock > /dev/null; then
        echo "gpu-dispatch: more than one GPU needs flock (util-linux)" >&2
        return 2
    fi
    export GPU_COUNT GPU_SHARED GPU_IDS_LIST GPU_SLOT_DIR GPU_PLACEMENT GPU_HOST
}

run_on_gpu() { # NAME CMD...
    local name=$1 slot=0 qfd fd id rc=0 t0=$SECONDS ids=() per=${GPU_JOBS_PER_DEVICE:-1} slots
    shift
    IFS=, read -r -a ids <<< "$GPU_IDS_LIST"
    case $per in '' | *[!0-9]* | 0) per=1 ;; esac
    slots=$((GPU_COUNT * per))
    if [ "$GPU_SHARED" -eq 1 ]; then
        id=${ids[0]:-0}
        (export MLA_GPU=$id MLA_GPU_SLOT=0; "$@") || rc=$?
    else
        # One waiter at a time polls the slots (the others sleep in flock on the queue lock).
        exec {qfd}>> "$GPU_SLOT_DIR/queue"
        flock "$qfd"
        while :; do
            for ((slot = 0; slot < slots; slot++)); do
                exec {fd}>> "$GPU_SLOT_DIR/slot.$slot"
                flock -n "$fd" && break 2
                exec {fd}>&-
            done
            sleep 0.2
        done
        exec {qfd}>&-
        id=${ids[$((slot % GPU_COUNT))]}
        # The job does not inherit the lock: the slot frees when this function's job ends.
        (export CUDA_VISIBLE_DEVICES=$id MLA_GPU=$id MLA_GPU_SLOT=$slot; "$@") {fd}>&- || rc=$?
        exec {fd}>&-
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$id" "$slot" "$GPU_HOST" \
        $((SECONDS - t0)) "$rc" >> "$GPU_PLACEMENT"
    return "$rc"
}

shard_init() { # I/N JOBS_FILE DURATIONS_FILE DIR [tools/shard.py plan options...]
    local spec=$1 jobs=$2 durations=$3 dir=$4 dopt=()
    shift 4
    if ! [[ $spec =~ ^([0-9]+)/([0-9]+)$ ]] ||
        [ "${BASH_REMATCH[1]}" -ge "${BASH_REMATCH[2]}" ]; then
        echo "gpu-dispatch: --shard takes I/N with 0 <= I < N, not '$spec'" >&2
        return 2
    fi
    SHARD_I=${BASH_REMATCH[1]} SHARD_N=${BASH_REMATCH[2]}
    if [ -n "$durations" ] && [ -f "$durations" ]; then
        dopt=(--durations "$durations")
    elif [ -n "$durations" ]; then
        echo "gpu-dispatch: no durations file $durations; every job counts the same" >&2
    fi
    SHARD_ALL_FILE="$dir/shard-jobs-all.txt"
    SHARD_MINE_FILE="$dir/shard-jobs.txt"
    [ "$jobs" -ef "$SHARD_ALL_FILE" ] || sort -u "$jobs" > "$SHARD_ALL_FILE" || return 2
    python3 "$GPU_DISPATCH_TOOLS/shard.py" plan --shard "$spec" "${dopt[@]}" \
        --jobs-file "$SHARD_ALL_FILE" "$@" > "$SHARD_MINE_FILE" || return 2
    echo "$spec $GPU_HOST" > "$dir/shard.txt"
    SHARD_SPEC=$spec
    export SHARD_SPEC SHARD_I SHARD_N SHARD_ALL_FILE SHARD_MINE_FILE
}

in_shard() { # NAME
    [ -n "${SHARD_SPEC:-}" ] || return 0
    if grep -qxF -- "$1" "$SHARD_ALL_FILE"; then
        grep -qxF -- "$1" "$SHARD_MINE_FILE"
        return
    fi
    local h
    h=$(printf '%s' "$1" | cksum)
    h=${h%% *}
    [ $((h % SHARD_N)) -eq "$SHARD_I" ] || return 1
    echo "shard $SHARD_SPEC: job $1 is not in the plan; it runs here (by its name's checksum)" >&2
}

export -f run_on_gpu in_shard
