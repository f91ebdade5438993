#!/bin/bash
# Thirty-seventh session, call 3 (the thirty-fifth session's next-call3.sh, cut to the device time left): main 5490aeb's bundle (ids as of b7e6a45, remapped in
# the thirty-fifth session's callB-remap.txt). The bf16 door's other 12 owed mutants: 3 cut
# before racecheck in the thirty-fourth session's call 4 (the row list's `k < n_k + 1`, the
# barrier after the first half's reads, `s <= ksw`) and the 9 it did not start, with every check
# that applies (a mutant of attn_tc_bf16 runs tc_attn_gpu_test's bf16 cases only). At 285
# worker-seconds a mutant before the sanitizers (call 4), 12 workers take one round of value
# checks in about 300 s.
# Predicted: the two unconfirmed value kills of the twenty-fifth session still owed (the third,
# the q load's `c <= kv_rank`, was killed in call 4): 0b6a1fd500 `c4 < wp4 - 1` and 11bf8f6ceb (the
# q16 test flipped), by a value check; the head guard one past (7010478c0f, 4d7a9f936d) by memcheck
# or a value check; the rest unknown.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
tar -xJf bin.tar.xz
tar -xJf relink.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; cp $D/w/steps.txt $D/; }
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
IDS=f4c1ae7ea8,f66436f86e,3599312699,a237ceefe4,77e1e1ecde,39a462b2e6,6a189f2534,7010478c0f
IDS=$IDS,0b6a1fd500,11bf8f6ceb,1ba6fce730,4d7a9f936d
timeout 380 python3 tools/mutate.py run --bundle . --ids $IDS \
  --checks 'tcbf16|tc_attn_gpu_test|attn_shake_gpu_test' \
  --jobs 12 --timeout 150 --sanitizer-timeout 240 --deadline 330 --grace 30 --prime-baselines \
  --out $D/w/mutate > $D/w/mutate.log 2>&1; st mutate $?
cd $D/w
sed -n '/Score per file/,/Survivors/p' mutate/mutation-report.md | grep "^|" | cut -c1-200
grep "^- \`kernels" mutate/mutation-report.md | cut -c1-220
sed -n '/Killed: by which/,/Where the time/p' mutate/mutation-report.md | grep "^| [0-9a-f]" | cut -c1-200
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/mutate/mutation-report.md . 2>/dev/null; rm -rf w
