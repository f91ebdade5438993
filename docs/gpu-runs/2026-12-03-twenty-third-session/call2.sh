#!/bin/bash
# twenty-third session, call 2: the bf16 door against the tf32 door (probe_door_arms), with its
# plan at 132 / tiles chunks (base) and at 66 / tiles (p64, a timing variant: 64 chunks at decode);
# then ncu --set full on decode 32K (both arms' walk and combine), and the bf16 walk's SASS with
# its stall samples.
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
mkdir -p out && tar -C out -xJf lib.tar.xz
export LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64
mkdir -p $D/w
cat COMMIT > $D/w/steps.txt
st() { echo "$1 rc=$2 $((SECONDS-T0)) s" >> $D/w/steps.txt; }
for v in base p64; do
  timeout 120 var/probe_door_arms_$v --rounds 3 > $D/w/probe_$v.md 2>&1; st probe_$v $?
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
timeout 240 $NCU --set full --kernel-name regex:"attn_tc|attn_combine" --launch-count 4 -o $D/w/door -f var/probe_door_arms_base --once > $D/w/ncu.log 2>&1; st ncu $?
timeout 60 $NCU -i $D/w/door.ncu-rep --page details > $D/w/details.txt 2>&1; st details $?
timeout 60 $NCU -i $D/w/door.ncu-rep --page raw --csv --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum > $D/w/raw.csv 2>&1; st raw $?
timeout 120 $NCU -i $D/w/door.ncu-rep --page source --csv --print-source sass --kernel-name regex:attn_tc_bf16 > $D/w/sass_bf16.csv 2>&1; st sass $?
cd $D/w
cat probe_base.md probe_p64.md
grep -E "attn_|Duration|Issue Slots Busy|Tensor|Stall|No Eligible|Warp Cycles Per Issued|Registers|Achieved Occupancy|Memory Throughput|DRAM Throughput" details.txt | head -80
cat raw.csv | cut -c1-400 | head -12
wc -l sass_bf16.csv
cat steps.txt
gzip -f sass_bf16.csv details.txt
cd $D && tar -czf call2.tar.gz -C w . && rm -rf w
