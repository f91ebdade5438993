#!/bin/bash
# Thirty-eighth session, call 2: absorb_q's 13 owed mutants (twenty-second session's pass), every
# check that applies, with this session's mutate.py: a golden suite's sanitizer set narrowed to
# the mutated kernel's stage (dense_gpu_goldens_test.absorb_q: the 7 san_*__absorb_q cases and
# bad_arguments_write_nothing) instead of its three parts. Expected (written before): the FMA split
# (b88a3629f3) and the part test flipped (b9d38396e6) killed by the absorb_q golden stage check;
# the off-by-ones that read or write past their range (q load <=, weights d <= DP / DP + 1, the
# q store's <= / DN + 1) undecided by values and decided by memcheck of the narrowed set, which
# should take well under 100 s a mutant unmutated.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
cp ../tools/mutate.py tools/mutate.py   # this session's (the bundle's is 492078c's)
ln -sfn ../golden golden
tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
tar -xJf relink.tar.xz
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
IDS=b80b4ba022,26133a26b3,4fb65a60cd,ef658936ed,bb7c0a7fbb,39bc8040fa,b9d38396e6,b88a3629f3,9b9835f42a,f041f82eac,77241dd81b,2b0b344996,52918b286f
S0=$SECONDS
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 bin/dense_gpu_goldens_test --jobs 2 \
  --filter='*/@(san_*__absorb_q|bad_arguments_write_nothing)' > $D/w/unmutated-memcheck.log 2>&1
echo "unmutated memcheck of the narrowed set: rc=$? $((SECONDS - S0)) s" > $D/w/steps.txt
timeout 520 python3 tools/mutate.py run --bundle . --ids $IDS --jobs 13 --timeout 150 \
  --sanitizer-timeout 250 --deadline 480 --grace 20 --out $D/w/mutate > $D/w/mutate.log 2>&1
echo "mutate rc=$? $((SECONDS - T0)) s" >> $D/w/steps.txt
cd $D/w
grep -E "ERROR SUMMARY|Synthesis" unmutated-memcheck.log
grep -E "^\*\*Total|^- \`" mutate/mutation-report.md 2>/dev/null | cut -c1-260; tail -n 3 mutate.log
cat steps.txt
cd $D && cp w/mutate/mutation-report.md . 2>/dev/null; tar -czf w.tar.gz w; rm -rf w
