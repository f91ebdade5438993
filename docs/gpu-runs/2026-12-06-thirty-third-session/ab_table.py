"""The A/B table of main-<r>.json against new-<r>.json (bench_dense's MLA_BENCH_JSON, rounds 1-3)
in the folder argv[1]: medians (min-max) and whether out_sha256 is equal, and stable run to run."""
import json
import sys


def rows(f):
    d = json.load(open(f))
    if isinstance(d, dict):
        d = next(v for v in d.values() if isinstance(v, list))
    return {(r["kernel"] + " " + r["shape"] + " " + (r.get("arm") or r.get("note") or "")):
            (r["median_us"], r.get("out_sha256")) for r in d}


def main(folder):
    vs, rs = ["main", "new"], (1, 2, 3)
    R = {(v, r): rows(f"{folder}/{v}-{r}.json") for v in vs for r in rs}
    print("| row | main | new | bytes |")
    print("| --- | ---: | ---: | --- |")
    for k in R[("main", 1)]:
        cells = []
        for v in vs:
            t = sorted(R[(v, r)][k][0] for r in rs)
            cells.append(f"{t[1]:.2f} ({t[0]:.2f}-{t[2]:.2f})")
        stable = all(R[(v, r)][k][1] == R[(v, 1)][k][1] for v in vs for r in rs)
        eq = R[("new", 1)][k][1] == R[("main", 1)][k][1]
        print(f"| {k} | " + " | ".join(cells) +
              f" | {'equal' if eq else 'differ'}{'' if stable else ' (run to run!)'} |")


if __name__ == "__main__":
    main(sys.argv[1])
