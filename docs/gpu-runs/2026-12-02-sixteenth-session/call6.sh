#!/bin/bash
# sixteenth session, call 6: fuzz/gathered_indices with the TC arms (bin/: the tree): its corpus
# replayed, then 90 s of fuzzing with 16 workers; then the same target built over a mutant door
# kernel (ab/gathered_indices_fuzzer_mut: attn_tc_f32's partial-logit sum skips warp 7's
# k-range) replayed over the corpus, which must fail.
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
rm -rf ab; tar -xJf ab.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
export ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0
mkdir -p $D/w; W=$D/w
cat COMMIT > $W/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $W/steps.txt
B=$(pwd)
mkdir -p $W/replay $W/fz/corpus $W/fz/repro $W/mut/repro
cp -r fuzz/corpus/gathered_indices/. $W/replay/
cp -r fuzz/corpus/gathered_indices/. $W/fz/corpus/
echo "corpus $(ls $W/replay | wc -l) inputs" >> $W/steps.txt
(cd $W && FUZZ_REPRO_DIR=$W/fz/repro timeout 120 $B/bin/gathered_indices_fuzzer -max_len=256 -runs=0 replay > replay.log 2>&1); echo "replay rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
(cd $W/fz && FUZZ_REPRO_DIR=$W/fz/repro timeout 150 $B/bin/gathered_indices_fuzzer -max_len=256 -jobs=16 -workers=16 -max_total_time=90 -print_final_stats=1 -artifact_prefix=$W/fz/repro/ corpus > $W/fuzz.log 2>&1); echo "fuzz rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
(cd $W/mut && FUZZ_REPRO_DIR=$W/mut/repro timeout 120 $B/ab/gathered_indices_fuzzer_mut -max_len=256 -runs=0 $W/replay > $W/mut.log 2>&1); echo "mutant replay rc=$? $((SECONDS-T0)) s" >> $W/steps.txt
cd $W
tail -5 replay.log
grep -h "stat::number_of_executed_units\|Done\|ERROR\|FUZZ" fz/fuzz-*.log 2>/dev/null | sort | uniq -c | head -20
ls fz/repro | head
grep -m3 -E "FUZZ|tc_arm|TC arm|mismatch|outside" mut.log; tail -30 mut.log | head -40
cat steps.txt
rm -rf fz/corpus replay
cd $D && tar -czf /tmp/call6.tar.gz -C w . && rm -rf $D/w && mv /tmp/call6.tar.gz $D/
