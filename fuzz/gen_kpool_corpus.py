# Seed corpora for the k-pool fuzz targets: random bytes whose tail (the parameter end) and
# front (bulk) vary; deterministic (seeded) so regeneration is reproducible.
import os, random, sys
root = sys.argv[1]
sizes = {"select_order": (16, 1200), "score_identity": (16, 200), "ring_residency": (24, 400),
         "gathered_indices": (16, 200)}
for t, (lo, hi) in sizes.items():
    d = os.path.join(root, t)
    os.makedirs(d, exist_ok=True)
    rng = random.Random("kpool-" + t)
    for i in range(24):
        n = rng.randint(lo, hi)
        b = bytes(rng.getrandbits(8) for _ in range(n))
        if i % 6 == 0:
            b = bytes(n - 16) + b[-16:]  # zero front, random tail: small/edge parameters
        with open(os.path.join(d, "seed-%03d" % i), "wb") as f:
            f.write(b)
