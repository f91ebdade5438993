#!/bin/bash
# Thirty-first session, call 4 (the session's last 300 s of device time). The mutation pass of
# call 3 spent its time in tc_attn_gpu_test whole (every arm's ~110 cases under 14 workers) and
# left 14 mutants cut there. Here each remaining mutant of mla_attn_wg.cu is a tc_attn_gpu_test
# built on this machine (tools/mutate.py apply, then bazel build, a244254), run on the GPU with
# only the wgmma arm's cases (--filter '*/*wgmma*': the arm's fixtures, edges, alignments, exact
# allocations, operand and weight rounding, and the new symmetry cases), 4 binaries at a time;
# tc_unmutated is the control. A failing case kills; a pass says the mutant survived the wgmma
# cases of tc_attn_gpu_test (value checks only: no sanitizer, no golden suite here).
set -o pipefail
D=$OUT; T0=$SECONDS
cd mut
mkdir -p lib && tar -C lib -xJf lib.tar.xz
tar -xJf bins.tar.xz
export LD_LIBRARY_PATH=$(pwd)/lib/lib:$(pwd)/lib:/usr/local/cuda/lib64
mkdir -p $D/w
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $D/w/steps.txt
one() {
  local b=$1
  timeout 150 ./$b --jobs 4 --fail-fast --filter '*/*wgmma*' > $D/w/$b.log 2>&1
  local rc=$?
  echo "$b rc=$rc $((SECONDS-T0)) s $(grep -m1 -E '^\[----\].*(Assertion|differ)|^\[FAIL\]' $D/w/$b.log | cut -c1-160)" >> $D/w/steps.txt
}
export -f one; export D T0
ls tc_* | xargs -P 4 -I{} bash -c 'one {}'
cd $D/w
for f in tc_*.log; do echo "$f: $(grep -E 'Synthesis' $f)"; grep -m2 -E '^\[FAIL\]' $f; done | cut -c1-200
cat steps.txt
cd $D && tar -czf w.tar.gz w; cp w/steps.txt .; rm -rf w
