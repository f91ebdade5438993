#!/bin/bash
# Thirty-first session, call 5 (the last ~110 s of device time): do three rounding mutants of the
# wgmma arm change its output at all on random data? bench_dense built here with each mutant
# (tools/mutate.py apply; a244254) and unmutated, BENCH_ONLY="TC door: wgmma" (decode 32K,
# verify, prefill, decode 8K and 128K): out_sha256 of each row against the unmutated binary's.
#  b8168f9709: wg_rescale's o[4n + 1] *= a0 with __fmul_rz (survived the symmetry cases);
#  5684c41d4a: l = __fmaf_rz(l, alpha, ls);  d067d6390c: the quad sum's second step __fadd_rz.
D=$OUT
cd mut2
mkdir -p lib && tar -C lib -xJf lib.tar.xz && xz -d bd_*.xz && chmod +x bd_*
export LD_LIBRARY_PATH=$(pwd)/lib/lib:/usr/local/cuda/lib64
mkdir -p $D/w
for b in unmutated b8168f9709 5684c41d4a d067d6390c; do
  MLA_BENCH_JSON=$D/w/$b.json BENCH_ONLY="TC door: wgmma" timeout 40 ./bd_$b > $D/w/$b.md 2> $D/w/$b.err
  echo "$b rc=$?" >> $D/w/steps.txt
done
cd $D/w && python3 - <<'PY' | tee sha.md
import json
def rows(f):
    d = json.load(open(f))
    if isinstance(d, dict): d = next(v for v in d.values() if isinstance(v, list))
    return {(r["kernel"] + " " + r["shape"]): r.get("out_sha256") for r in d}
base = rows("unmutated.json")
for b in ["b8168f9709", "5684c41d4a", "d067d6390c"]:
    try: m = rows(b + ".json")
    except Exception as e: print(b, "no json", e); continue
    print(b, " | ".join(f"{k}: {'same' if m.get(k) == v else 'DIFFERS'}" for k, v in base.items()))
PY
cat steps.txt
cd $D && tar -czf w.tar.gz w
