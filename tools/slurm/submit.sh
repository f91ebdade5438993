#!/usr/bin/env bash
# tools/slurm/submit.sh: the nightly GPU tier over a Slurm cluster: a job array of N shards
# (tools/slurm/nightly.sbatch, one GPU per task), then a merge job once every task has ended
# (--dependency=afterany: a failed or killed shard still gets merged, and counts as a failure).
#
#   tools/slurm/submit.sh [--shards N] [--bundle DIR] [--run-dir DIR] [--partition P]
#                         [--time T] [--cpus N] [--no-gpu] [--sbatch-arg ARG]...
#                         [-- RUN-GPU-TIER ARGS...]
#
# --bundle: the bundle (tools/harness bundle; default: the bundle this script sits in). --run-dir
# (default ./nightly-<date>-<time>): on a filesystem every node sees; shard I writes
# RUN_DIR/shard-I, the merge RUN_DIR/merged (summary-gpu.json, junit-gpu.xml, result-gpu.txt:
# `N passed, N failed, N skipped`), the Slurm logs go to RUN_DIR/logs. The merge job fails on
# any failure the known-failure ledger does not list. --no-gpu: no --gres (a CPU-only payload,
# e.g. NIGHTLY_PAYLOAD; see nightly.sbatch). Prints "array JOBID", "merge JOBID", "run-dir DIR".
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SHARDS=4 BUNDLE="" RUN_DIR="" GPU=1 EXTRA=() CPUS=()
[ -x "$HERE/../../run-gpu-tier.sh" ] && BUNDLE=$(cd "$HERE/../.." && pwd)
while [ $# -gt 0 ]; do
    case "$1" in
        --shards) SHARDS=$2; shift 2 ;;
        --bundle) BUNDLE=$2; shift 2 ;;
        --run-dir) RUN_DIR=$2; shift 2 ;;
        --partition) EXTRA+=(--partition "$2"); shift 2 ;;
        --time) EXTRA+=(--time "$2"); shift 2 ;;
        --cpus) CPUS=(--cpus-per-task "$2"); shift 2 ;;
        --no-gpu) GPU=0; shift ;;
        --sbatch-arg) EXTRA+=("$2"); shift 2 ;;
        --) shift; break ;;
        *) echo "submit.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
case $SHARDS in '' | *[!0-9]* | 0) echo "submit.sh: --shards takes N >= 1" >&2; exit 2 ;; esac
if [ -z "$BUNDLE" ] || [ ! -x "$BUNDLE/run-gpu-tier.sh" ]; then
    echo "submit.sh: --bundle DIR (a folder with run-gpu-tier.sh: tools/harness bundle)" >&2
    exit 2
fi
BUNDLE=$(cd "$BUNDLE" && pwd)
RUN_DIR=${RUN_DIR:-$PWD/nightly-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$RUN_DIR/logs" || exit 2
RUN_DIR=$(cd "$RUN_DIR" && pwd)
gres=(--gres=gpu:1)
[ "$GPU" -eq 1 ] || gres=(--gres=none)
export NIGHTLY_BUNDLE="$BUNDLE" NIGHTLY_RUN_DIR="$RUN_DIR" NIGHTLY_SHARDS="$SHARDS"

array=$(sbatch --parsable --export=ALL --array="0-$((SHARDS - 1))" "${gres[@]}" "${CPUS[@]}" \
    --chdir="$RUN_DIR" --output="$RUN_DIR/logs/shard-%a.log" "${EXTRA[@]}" \
    "$HERE/nightly.sbatch" "$@") || { echo "submit.sh: sbatch (array) failed" >&2; exit 1; }
array=${array%%;*}
dirs=""
for ((i = 0; i < SHARDS; i++)); do dirs+=" '$RUN_DIR/shard-$i'"; done
merge=$(sbatch --parsable --export=ALL --dependency="afterany:$array" --job-name=mla-nightly-merge \
    --ntasks=1 --cpus-per-task=1 --chdir="$RUN_DIR" --output="$RUN_DIR/logs/merge.log" \
    "${EXTRA[@]}" --wrap="OUT='$RUN_DIR/merged' '$BUNDLE/run-gpu-tier.sh' --expect $SHARDS \
--merge$dirs") || { echo "submit.sh: sbatch (merge) failed; cancelling $array" >&2
    scancel "$array"; exit 1; }
merge=${merge%%;*}
echo "array $array"
echo "merge $merge"
echo "run-dir $RUN_DIR"
