#!/usr/bin/env bash
# A real Slurm run of the nightly shards, on this machine, with a CPU-only payload:
#   slurm_test.sh GPU_PROBE TEST_BINARY...
# Installs nothing. When munged, slurmctld and slurmd are there (Debian: munge, slurm-wlm), it
# starts a single-node Slurm (munged on its own key and socket; a generated slurm.conf: node
# localhost with 2 CPUs and no GPU, select/cons_tres, proctrack/linuxproc, no accounting), packs
# a CPU bundle (run-gpu-tier.sh and its tools, the given Criterion binaries and gpu_probe), runs
# tools/slurm/submit.sh --shards 3 --no-gpu with NIGHTLY_PAYLOAD pointing at that bundle's
# runner, waits for the merge job, and checks the merged summary against the same bundle run
# in one piece without Slurm; then the same with shard 1 failing: the merge job must fail.
# The daemons stop on every path (trap). Where Slurm is not installed or does not start, the
# one case is SKIPPED with the reason (tools/testlib.sh: a <skipped> JUnit case), never passed.
set -uo pipefail
TOOLS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$TOOLS/testlib.sh"
export PATH="$PATH:/usr/sbin:/sbin"
PROBE=$(realpath "${1:?usage: slurm_test.sh GPU_PROBE TEST_BINARY...}")
shift
BINARIES=()
for b in "$@"; do BINARIES+=("$(realpath "$b")"); done
for b in "$PROBE" "${BINARIES[@]}"; do
    [ -x "$b" ] || { check "the payload's binaries are there" 1 "not executable: '$b'"; finish; }
done
DEADLINE=$((SECONDS + 90)) # the whole test, daemons included, stays under 2 minutes

missing=""
for c in munged slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
    command -v "$c" > /dev/null || missing+=" $c"
done
if [ -n "$missing" ]; then
    skip_case "single-node Slurm run" "not installed:$missing (Debian packages slurm-wlm, munge)"
    finish
fi

# A short path: munged's socket path must fit a sockaddr_un.
D=$(mktemp -d /tmp/mla-slurm.XXXXXX)
chmod 711 "$D"
PIDS=()
cleanup() {
    if [ -n "${CTLD_PID:-}" ] && kill -0 "$CTLD_PID" 2> /dev/null; then
        scancel --quiet --user="$(id -un)" 2> /dev/null
        for _ in $(seq 1 10); do
            [ -z "$(squeue -h 2> /dev/null)" ] && break
            sleep 0.5
        done
    fi
    local i
    for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do kill "${PIDS[$i]}" 2> /dev/null; done
    for i in "${PIDS[@]}"; do
        for _ in $(seq 1 12); do kill -0 "$i" 2> /dev/null || break; sleep 0.25; done
        kill -9 "$i" 2> /dev/null
    done
    if [ -n "${TEST_UNDECLARED_OUTPUTS_DIR:-}" ]; then # the runs' out dirs and the daemons' logs
        cp "$D"/*.log "$D"/*.out "$TEST_UNDECLARED_OUTPUTS_DIR/" 2> /dev/null
        cp -r "$D/run" "$D/run_fail" "$TEST_UNDECLARED_OUTPUTS_DIR/" 2> /dev/null
    fi
    rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

cannot_start() { # REASON, LOG: Slurm cannot run here: a skip with the reason, never a pass
    skip_case "single-node Slurm run" "$1: $(tail -n 3 "$2" 2> /dev/null | tr '\n' ' ')"
    finish
}
wait_for() { # SECONDS PID COMMAND...: until COMMAND succeeds (1: time is up, or PID ended)
    local end=$((SECONDS + $1)) pid=$2
    shift 2
    until "$@" > /dev/null 2>&1; do
        [ "$SECONDS" -lt "$end" ] && kill -0 "$pid" 2> /dev/null || return 1
        sleep 0.25
    done
}
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0));
print(s.getsockname()[1])'
}

# munge: its own key and socket.
dd if=/dev/urandom of="$D/munge.key" bs=1024 count=1 2> /dev/null
chmod 400 "$D/munge.key"
munged -F -f --socket="$D/munge.sock" --key-file="$D/munge.key" --log-file="$D/munged.log" \
    --pid-file="$D/munged.pid" --seed-file="$D/munged.seed" > "$D/munged.out" 2>&1 &
PIDS+=($!)
wait_for 10 $! test -S "$D/munge.sock" || cannot_start "munged did not start" "$D/munged.out"

t_start=$SECONDS
mkdir -p "$D/state" "$D/spool"
cat > "$D/slurm.conf" << EOF
ClusterName=mlatest
SlurmctldHost=$(hostname -s 2> /dev/null || uname -n)(127.0.0.1)
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$D/munge.sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmdParameters=config_overrides
MailProg=/bin/true
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=10 State=UP
EOF
export SLURM_CONF="$D/slurm.conf"
slurmctld -D -i -f "$SLURM_CONF" > "$D/slurmctld.out" 2>&1 &
CTLD_PID=$!
PIDS+=($!)
wait_for 20 $! scontrol ping || cannot_start "slurmctld did not start" "$D/slurmctld.out"
slurmd -D -N localhost -f "$SLURM_CONF" > "$D/slurmd.out" 2>&1 &
PIDS+=($!)
node_idle() { [ "$(sinfo -h -n localhost -o %t 2> /dev/null)" = idle ]; }
wait_for 20 $! node_idle || cannot_start "slurmd did not register its node" "$D/slurmd.out"
t_up=$SECONDS
echo "slurm: controller and node up in $((t_up - t_start)) s ($(slurmctld -V))"

# The CPU bundle: the bundle's runner and tools, CPU test binaries, no fuzzers.
B="$D/bundle"
mkdir -p "$B/bin" "$B/tools/slurm"
cp "$TOOLS/run-gpu-tier.sh" "$B/"
cp "$TOOLS/gpu_dispatch.sh" "$TOOLS/shard.py" "$TOOLS/summarize.py" "$TOOLS/shard_durations.json" \
    "$B/tools/"
cp "$TOOLS/slurm/nightly.sbatch" "$TOOLS/slurm/submit.sh" "$B/tools/slurm/"
cp -L "$PROBE" "${BINARIES[@]}" "$B/bin/"
echo "# empty ledger" > "$B/known_failures.txt"
echo "slurm_test" > "$B/COMMIT"
tar -C "$D" -cJf "$B/lib.tar.xz" --files-from /dev/null
# The CPU payload (nightly.sbatch's NIGHTLY_PAYLOAD): the bundle's runner on this shard, one
# Criterion worker per binary (the node has 2 CPUs). FAIL_SHARD: that shard fails.
PAYLOAD='echo "cpu payload: shard $NIGHTLY_SHARD"
[ "$NIGHTLY_SHARD_INDEX" != "${FAIL_SHARD:-}" ] || exit 7
./run-gpu-tier.sh --shard "$NIGHTLY_SHARD" "$@"'

# The same bundle in one piece, without Slurm: what the merge must reproduce.
OUT="$D/local" env -u XML_OUTPUT_FILE timeout $((DEADLINE - SECONDS)) \
    "$B/run-gpu-tier.sh" --jobs 1 \
    > "$D/local.out" 2>&1
check "the CPU bundle runs in one piece (run-gpu-tier.sh, exit 0)" $? "$(tail -3 "$D/local.out")"

state_of() { scontrol -o show job "$1" 2> /dev/null | grep -o 'JobState=[A-Z_]*' | sort -u |
    tr '\n' ' '; }
submit_and_wait() { # RUN_DIR, FAIL_SHARD: submits, waits for the merge job; sets ARRAY MERGE
    local out
    out=$(env -u XML_OUTPUT_FILE FAIL_SHARD="$2" NIGHTLY_PAYLOAD="$PAYLOAD" \
        "$B/tools/slurm/submit.sh" --shards 3 --no-gpu --cpus 1 --time 5 --run-dir "$1" \
        -- --jobs 1 2>&1)
    ARRAY=$(awk '$1 == "array" {print $2}' <<< "$out")
    MERGE=$(awk '$1 == "merge" {print $2}' <<< "$out")
    [ -n "$ARRAY" ] && [ -n "$MERGE" ] || { echo "$out"; return 1; }
    until [ -z "$(squeue -h -j "$ARRAY,$MERGE" 2> /dev/null)" ]; do
        [ "$SECONDS" -lt "$DEADLINE" ] || { echo "deadline: $(squeue 2>&1)"; return 1; }
        sleep 0.5
    done
}

# The nightly over 3 shards.
t0=$SECONDS
submit_and_wait "$D/run" ""
check "submit.sh: an array of 3 shards and a merge job, all ended in time" $?
t_run=$((SECONDS - t0))
st_array=$(state_of "$ARRAY") st_merge=$(state_of "$MERGE")
check "every array task COMPLETED" $([ "$st_array" = "JobState=COMPLETED " ]; echo $?) "$st_array"
check "the merge job (afterany) COMPLETED" $([ "$st_merge" = "JobState=COMPLETED " ]; echo $?) \
    "$st_merge; $(tail -3 "$D/run/logs/merge.log" 2> /dev/null)"
n=$(cat "$D"/run/logs/shard-*.log 2> /dev/null | grep -c "^cpu payload: shard [012]/3$")
check "NIGHTLY_PAYLOAD ran in each of the 3 tasks" $((n != 3)) "saw $n"
python3 - "$D" "${#BINARIES[@]}" << 'EOF'
import json, sys
d = sys.argv[1]
m = json.load(open(f"{d}/run/merged/summary-gpu.json"))
u = json.load(open(f"{d}/local/summary-gpu.json"))
assert m["totals"] == u["totals"], (m["totals"], u["totals"])
assert sum(u["totals"].values()) > 0 and len(u["suites"]) == int(sys.argv[2]), u["suites"]
assert m["suites"] == u["suites"], (sorted(m["suites"]), sorted(u["suites"]))
assert [s["shard"] for s in m["shards"]] == ["0/3", "1/3", "2/3"], m["shards"]
assert all(s["status"] == "finished" for s in m["shards"]), m["shards"]
assert sorted(m["shard_of"]) == sorted(u["suites"]), m["shard_of"]
jobs = [j for s in m["shards"] for j in s["jobs"]]
assert sorted(jobs) == sorted(u["suites"]), jobs  # each binary ran in exactly one shard
EOF
check "merged summary = the one-piece run (counts, suites), each binary in exactly one shard" $?
merged_line=$(cat "$D/run/merged/result-gpu.txt" 2> /dev/null)
check "merge log ends with the closing line ($merged_line)" \
    $([ -n "$merged_line" ] && [ "$(tail -n 1 "$D/run/logs/merge.log")" = "$merged_line" ]
      echo $?)

# Shard 1 fails (exit 7, no summary): the merge still runs (afterany) and fails.
t0=$SECONDS
submit_and_wait "$D/run_fail" 1
check "with a failing shard: array and merge ended in time" $?
t_fail=$((SECONDS - t0))
st_merge=$(state_of "$MERGE")
check "a failing shard fails the merge job (FAILED)" \
    $([ "$st_merge" = "JobState=FAILED " ]; echo $?) "$st_merge"
grep -q "^  shard 1/3: (shard)  -- .*no summary-gpu.json: the shard did not finish" \
    "$D/run_fail/logs/merge.log" &&
    grep -q "^[0-9]* passed, 1 failed, " "$D/run_fail/logs/merge.log"
check "the merge names the shard that did not finish (one failure: shard 1/3)" $? \
    "$(tail -n 4 "$D/run_fail/logs/merge.log" 2> /dev/null)"

echo "slurm: up $((t_up - t_start)) s; 3 shards + merge $t_run s; failing run $t_fail s"
echo "slurm: merged summary: $merged_line"
python3 - "$D/run/merged/summary-gpu.json" << 'EOF' 2> /dev/null
import json, sys
for x in json.load(open(sys.argv[1]))["shards"]:
    print(f"slurm: shard {x['shard']} on {x.get('host')}: {' '.join(x['jobs'])}")
EOF
finish
