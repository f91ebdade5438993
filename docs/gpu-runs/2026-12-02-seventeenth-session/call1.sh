#!/bin/bash
# seventeenth session, call 1: the attn_gathered peer beside bench_kpool, the TC attention test
# and the gathered fuzzer with the shared coverage rule (tests/lib/tc_attn.h)
set -o pipefail
D=$OUT; R=$(pwd); T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
mkdir -p $D/w
cat COMMIT > $D/w/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $D/w/steps.txt
( timeout 200 ./bin/tc_attn_gpu_test > $D/w/tc_attn_gpu_test.log 2>&1; echo "tc_attn_gpu_test rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt )
MLA_BENCH_JSON=$D/w/bench-kpool.json timeout 200 ./bin/bench_kpool > $D/w/bench_kpool.log 2>&1; echo "bench_kpool rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
timeout 200 python3 tools/bench/torch_peer.py --json $D/w/peer-torch.json --self-check golden --ours $D/w/bench-kpool.json > $D/w/torch_peer.log 2>&1; echo "torch_peer rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
mkdir -p $D/w/gi && cp -r fuzz/corpus/gathered_indices $D/w/gi/corpus
ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 timeout 100 ./bin/gathered_indices_fuzzer -max_total_time=70 -rss_limit_mb=0 -print_final_stats=1 $D/w/gi/corpus fuzz/corpus/gathered_indices > $D/w/gathered_fuzz.log 2>&1; echo "gathered_fuzz rc=$? $((SECONDS-T0)) s" >> $D/w/steps.txt
rm -rf $D/w/gi
cd $D/w
tail -4 tc_attn_gpu_test.log
grep -E "self-check|attn_gathered|kpool_select" torch_peer.log | head -30
grep -E "stat::number_of_executed_units|ERROR|SUMMARY" gathered_fuzz.log | head
cat steps.txt
cd $D && tar -czf call1.tar.gz -C w . && rm -rf w
