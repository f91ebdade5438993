#!/bin/bash
# fourteenth session, call 6: the sanitizer stages of the thirteenth pass's five mutants cut at its
# hard stop (each had passed the value checks: shake, identities, replay), few workers
set -o pipefail
D=$OUT; T0=$SECONDS
cd bundle
ln -sfn ../golden golden
[ -d bin ] || tar -xJf bin.tar.xz
[ -d relink ] || tar -xJf relink.tar.xz
mkdir -p out && tar -C out -xJf lib.tar.xz
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$(pwd)/out/lib:/usr/local/cuda/lib64 MLA_GOLDEN_DIR=$(pwd)/golden
cat COMMIT > $D/steps.txt
timeout 360 python3 tools/mutate.py run --bundle . --ids 85c887aa97,bc790e9291,d1b487920f,a9a8b416a0,129ad04442 \
  --checks '^(racecheck|memcheck) (select_shake_gpu_test|kpool_identities_gpu_test)( --filter=.*)?$' --jobs 5 --timeout 150 --sanitizer-timeout 240 \
  --deadline 20 --grace 310 --out $D/mutate > $D/mutate.log 2>&1
echo "mutate rc=$? $((SECONDS-T0)) s" >> $D/steps.txt
sed -n '1,60p' $D/mutate/mutation-report.md
tail -5 $D/mutate.log
cat $D/steps.txt
