#!/bin/bash
# fourteenth session, call 5: bench_dense and the PyTorch peer (its GPU-side spin new) alone (call 3 and 4 peers
# peer ran about 2x slower than calls 2's and the thirteenth session's)
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
cat COMMIT > $D/steps.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv >> $D/steps.txt
MLA_BENCH_JSON=$D/bench-dense.json timeout 200 bin/bench_dense > $D/bench_dense.log 2>&1; echo "bench_dense rc=$? $((SECONDS-T0)) s" >> $D/steps.txt
timeout 240 python3 tools/bench/torch_peer.py --json $D/peer-torch.json --self-check golden --ours $D/bench-dense.json > $D/torch_peer.log 2>&1; echo "torch_peer rc=$? $((SECONDS-T0)) s" >> $D/steps.txt
python3 tools/bench/goals.py --ours $D/bench-dense.json --peer $D/peer-torch.json --md $D/goals.md --json $D/goals.json > /dev/null 2>&1; echo "goals rc=$?" >> $D/steps.txt
sed -n '/PyTorch peer/,$p' $D/torch_peer.log | head -20
cat $D/goals.md
cat $D/steps.txt
