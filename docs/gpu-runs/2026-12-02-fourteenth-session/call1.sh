#!/bin/bash
# fourteenth session, call 1: probe_dense_flat (its unrun ab_warp128 row), bench_dense's dense rows
# (the flat decompress arm at t_q 2-4), the dense GPU suites with the new straddle geometries and
# their sanitizer runs, ncu of the tf32 door and of the flat arm at verify
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden 2>/dev/null; [ -e golden ] || ln -s ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
cat COMMIT > $D/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/steps.txt
for t in dense_gpu_goldens_test decode_split_gpu_test decode_chain_gpu_test; do
  (timeout 200 bin/$t > $D/$t.txt 2>&1; echo "$t rc=$? $((SECONDS-T0)) s" >> $D/steps.txt) &
done; wait
for n in 1 2; do timeout 120 bin/probe_dense_flat > $D/probe$n.txt 2>&1; echo "probe$n rc=$? $((SECONDS-T0)) s" | tee -a $D/steps.txt; done
for o in decompress_v absorb_q; do BENCH_ONLY=$o timeout 150 bin/bench_dense > $D/bench-$o.txt 2>&1; echo "bench $o rc=$? $((SECONDS-T0)) s" | tee -a $D/steps.txt; done
for tool in memcheck racecheck; do
  (timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 bin/decode_split_gpu_test --filter 'decode_split_gpu/san_flat_straddle*' > $D/san-$tool.txt 2>&1; echo "sanitize $tool rc=$? $((SECONDS-T0)) s" >> $D/steps.txt) &
done
k1="attn_tc_f32:attn_absorbed decode TC door: tf32"; k2="decompress_v_flat_f32:decompress_v verify split off"
for k in "$k1" "$k2"; do
  kn=${k%%:*}; only=${k#*:}; tag=$(echo "$only" | tr ' :' '__')
  BENCH_ONLY="$only" timeout 150 ncu --clock-control none --kernel-name regex:"$kn" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    -o $D/ncu-$tag bin/bench_dense > $D/ncu-$tag.log 2>&1
  echo "ncu $tag rc=$? $((SECONDS-T0)) s" | tee -a $D/steps.txt
  ncu -i $D/ncu-$tag.ncu-rep --page details > $D/ncu-$tag-details.txt 2>&1
  ncu -i $D/ncu-$tag.ncu-rep --page source --csv --print-source sass > $D/ncu-$tag-sass.csv 2>&1
  rm -f $D/ncu-$tag.ncu-rep
done
wait
cd $D && tar -czf call1.tar.gz *.txt *.csv *.log && ls
cat probe1.txt probe2.txt | grep -vE "^\s*$" | tail -40
grep -hE "decode|verify" bench-*.txt | grep -iE "split off|door" | head -16
grep -hE "Duration|DRAM Throughput|Registers Per|Achieved Occ|Issue Slots Busy|No Eligible" ncu-*-details.txt
for t in dense_gpu_goldens_test decode_split_gpu_test decode_chain_gpu_test; do tail -2 $t.txt; done
tail -3 san-*.txt
cat steps.txt
