#!/bin/bash
# twenty-second session, call 1: probe_absorb_tail (absorb_q's decode arm, the chain after its loads)
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
./probe_absorb_tail > $OUT/probe.txt 2> $OUT/probe.err; echo "probe rc $?" | tee -a $OUT/probe.txt
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
$CUOBJ -sass ./probe_absorb_tail > $OUT/sass.txt 2>&1; echo "cuobjdump rc $?"
gzip -k $OUT/sass.txt
# the shipped arm's and the q-first form's SASS: the waits of their first fmas
for k in '_Z7ab_tailILi256ELi1ELb0ELi0EEvPKfS1_Pf' '_Z7ab_tailILi256ELi1ELb1ELi0EEvPKfS1_Pf'; do
  awk -v k="$k" '$0 ~ "Function : "k {p=1} p && /Function : / && $0 !~ k {p=0} p' $OUT/sass.txt > $OUT/sass-$k.txt
  echo "$k: $(grep -c LDG $OUT/sass-$k.txt) LDG, $(grep -c FFMA $OUT/sass-$k.txt) FFMA, $(grep -c DEPBAR $OUT/sass-$k.txt) DEPBAR"
done
rm -f $OUT/sass.txt
cat $OUT/probe.txt
