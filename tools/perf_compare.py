#!/usr/bin/env python3
"""tools/perf_compare.py: the perf gate (docs/perf-gate.md). Compares the benchmark JSON of a base
and a change, row by row (bench, kernel, shape, arm: tools/bench/bench_json.h), and says per row
the speedup with a 95 % interval, whether the change is slower or faster beyond the noise, and
whether the output bytes are identical (the rows' out_sha256).

  perf_compare.py ab --base DIR --change DIR [--repeats 5] [--out DIR] [--threshold 0.05]
                     [--benches bench_dense,bench_kpool] [--require-identical]
      On a GPU host: runs the benchmark binaries of both arms (DIR/bench_* or DIR/bin/bench_*,
      e.g. from `tools/harness perf-arm`) REPEATS times each, interleaved on one GPU (repeat r
      runs base then change when r is even, change then base when odd, so drift and heat hit
      both arms alike), each run writing JSON through MLA_BENCH_JSON into OUT/json/; then
      `compare` on those files.
  perf_compare.py compare --base F... --change F... [--threshold 0.05] [--require-identical]
      The comparison alone, on JSON files already written (each file one run of one benchmark;
      several runs of an arm are its repeats).

The statistic: per row each run contributes its median launch time (the JSON's median_us). With
base medians b_1..b_n and change medians c_1..c_m, d_ij = ln b_i - ln c_j; the speedup is
exp(median d) (the Hodges-Lehmann estimate: > 1 means the change is faster) and its 95 % interval
is exp of the order statistics d_(k), d_(nm-k+1) with k from the exact Mann-Whitney distribution
(the distribution-free interval for a shift; at least 4 repeats per arm give one). A row is
SLOWER when the whole interval lies below 1 / (1 + threshold), FASTER when it lies above
1 + threshold, else within noise. Bytes: identical when every run of both arms has the same
out_sha256; differs; nondeterministic when one arm's own runs disagree; n/a without hashes.

Writes OUT/perf-compare.md and OUT/perf-compare.json (compare: --out, default: none) and prints
the table, then one line `perf_compare: ...`. Exit codes: 0 no row slower; 1 --require-identical
and some row's bytes differ or are nondeterministic, or the change's benchmark failed; 2 some row
slower beyond noise (each named); 3 infrastructure (a binary or a JSON file missing or malformed,
the base's benchmark failed, no GPU, a row in one arm only, fewer than 2 repeats).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

EXIT_OK, EXIT_BYTES, EXIT_SLOWER, EXIT_INFRA = 0, 1, 2, 3


class Infra(Exception):
    pass


def mann_whitney_k(n, m, alpha=0.05):
    """The largest k >= 1 with P(U <= k - 1) <= alpha / 2 under H0 (U the Mann-Whitney count of
    n x m pairs, exact by counting), or 0 when none (too few runs for the interval)."""
    # counts[u] = number of arrangements of n + m ranks with statistic u: the coefficients of
    # the Gaussian binomial [n + m choose n] in q, built by the recurrence over sizes.
    total = math.comb(n + m, n)
    # f(a, b)[u]: arrangements of a x's and b y's with u (x, y) inversions
    prev = [[1] for _ in range(m + 1)]  # a = 0: one arrangement, u = 0
    for a in range(1, n + 1):
        cur = [[1]]  # b = 0
        for b in range(1, m + 1):
            # last element is an x (adds b inversions with the y's before it) or a y
            x = [0] * b + prev[b]
            y = cur[b - 1]
            size = max(len(x), len(y))
            cur.append([(x[i] if i < len(x) else 0) + (y[i] if i < len(y) else 0)
                        for i in range(size)])
        prev = cur
    counts = prev[m]
    k, cum = 0, 0
    for u, c in enumerate(counts):
        cum += c
        if cum / total <= alpha / 2:
            k = u + 1
        else:
            break
    return k


def speedup_interval(base, change, alpha=0.05):
    """(estimate, lo, hi) of base / change time from per-run medians (see the module text);
    lo / hi are None when the runs are too few for an interval."""
    d = sorted(math.log(b) - math.log(c) for b in base for c in change)
    n = len(d)
    est = math.exp((d[(n - 1) // 2] + d[n // 2]) / 2)
    k = mann_whitney_k(len(base), len(change), alpha)
    if k == 0:
        return est, None, None
    return est, math.exp(d[k - 1]), math.exp(d[n - k])


def load_runs(paths, arm):
    """{key: [row, ...]} over the files (each one run). key = (bench, kernel, shape, arm)."""
    rows = {}
    for p in paths:
        try:
            with open(p) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise Infra(f"{arm}: cannot read benchmark JSON {p}: {e}") from e
        if not isinstance(data, list):
            raise Infra(f"{arm}: {p} is not a JSON list of rows")
        seen = set()
        for r in data:
            try:
                key = (r.get("bench", ""), r["kernel"], r.get("shape", ""), r.get("arm", ""))
                med = float(r["median_us"])
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                raise Infra(f"{arm}: {p}: a row without kernel / median_us ({e!r})") from e
            if not med > 0 or not math.isfinite(med):
                raise Infra(f"{arm}: {p}: {key}: median_us {med} is not a positive time")
            if key in seen:
                raise Infra(f"{arm}: {p}: row {key} twice in one run")
            seen.add(key)
            rows.setdefault(key, []).append(r)
    return rows


def bytes_verdict(brows, crows):
    bh = [r.get("out_sha256") for r in brows]
    ch = [r.get("out_sha256") for r in crows]
    if not all(bh) or not all(ch):
        return "n/a"
    if len(set(bh)) > 1:
        return "base nondeterministic"
    if len(set(ch)) > 1:
        return "change nondeterministic"
    return "identical" if bh[0] == ch[0] else "differs"


def compare(base_files, change_files, threshold, require_identical, out=None, log=print):
    base, change = load_runs(base_files, "base"), load_runs(change_files, "change")
    only = sorted(set(base) ^ set(change))
    if only:
        raise Infra("rows in one arm only (not comparable; same benchmarks on both sides?): " +
                    "; ".join("/".join(k) + (" (base)" if k in base else " (change)")
                              for k in only[:8]))
    results = []
    for key in sorted(base):
        b = [float(r["median_us"]) for r in base[key]]
        c = [float(r["median_us"]) for r in change[key]]
        if len(b) < 2 or len(c) < 2:
            raise Infra(f"{'/'.join(key)}: {len(b)} base and {len(c)} change runs; the interval "
                        "needs repeats (>= 4 per arm for 95 %)")
        est, lo, hi = speedup_interval(b, c)
        if lo is None:
            verdict = "too few repeats"
        elif hi < 1 / (1 + threshold):
            verdict = "SLOWER"
        elif lo > 1 + threshold:
            verdict = "faster"
        else:
            verdict = "within noise"
        results.append({
            "bench": key[0], "kernel": key[1], "shape": key[2], "arm": key[3],
            "base_us": sorted(b)[len(b) // 2], "change_us": sorted(c)[len(c) // 2],
            "base_runs": len(b), "change_runs": len(c), "speedup": est, "lo": lo, "hi": hi,
            "verdict": verdict, "bytes": bytes_verdict(base[key], change[key])})

    def fmt_i(r):
        if r["lo"] is None:
            return f"{r['speedup']:.3f}x (no interval)"
        return f"{r['speedup']:.3f}x [{r['lo']:.3f}, {r['hi']:.3f}]"

    md = ["# Perf gate: base against change", "",
          f"{results[0]['base_runs'] if results else 0} base and "
          f"{results[0]['change_runs'] if results else 0} change runs per row; speedup = base "
          "time / change time (> 1: the change is faster), 95 % interval (Hodges-Lehmann / "
          f"Mann-Whitney over the runs' medians); slower or faster beyond {threshold:.0%}.", "",
          "| bench | kernel | shape | arm | base us | change us | speedup [95 %] | verdict "
          "| bytes |", "| --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |"]
    for r in results:
        md.append(f"| {r['bench']} | {r['kernel']} | {r['shape']} | {r['arm']} | "
                  f"{r['base_us']:.2f} | {r['change_us']:.2f} | {fmt_i(r)} | {r['verdict']} | "
                  f"{r['bytes']} |")
    slower = [r for r in results if r["verdict"] == "SLOWER"]
    faster = [r for r in results if r["verdict"] == "faster"]
    bad_bytes = [r for r in results if r["bytes"] not in ("identical", "n/a")]
    name = lambda r: f"{r['kernel']} ({r['shape']}{', ' + r['arm'] if r['arm'] else ''})"
    code = EXIT_SLOWER if slower else EXIT_BYTES if (require_identical and bad_bytes) else EXIT_OK
    line = (f"perf_compare: {len(results)} rows; {len(slower)} slower beyond noise"
            + (": " + "; ".join(f"{name(r)} {r['speedup']:.2f}x" for r in slower) if slower else "")
            + f"; {len(faster)} faster; bytes: "
            + f"{sum(r['bytes'] == 'identical' for r in results)} identical, "
            + f"{len(bad_bytes)} differ or nondeterministic"
            + (" (" + "; ".join(f"{name(r)}: {r['bytes']}" for r in bad_bytes[:6]) + ")"
               if bad_bytes else "")
            + f", {sum(r['bytes'] == 'n/a' for r in results)} without hashes; exit {code}")
    md += ["", line]
    log("\n".join(md))
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "perf-compare.md"), "w") as f:
            f.write("\n".join(md) + "\n")
        with open(os.path.join(out, "perf-compare.json"), "w") as f:
            json.dump({"threshold": threshold, "exit": code, "rows": results}, f, indent=1)
    return code


def find_bench(d, bench):
    for p in (os.path.join(d, bench), os.path.join(d, "bin", bench)):
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    raise Infra(f"no executable {bench} in {d} (nor {d}/bin)")


def ab(args):
    out = args.out
    os.makedirs(os.path.join(out, "json"), exist_ok=True)
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    benches = [b for b in args.benches.split(",") if b]
    arms = {"base": args.base, "change": args.change}
    bins = {(a, b): find_bench(d, b) for a, d in arms.items() for b in benches}
    files = {"base": [], "change": []}
    t_all = time.time()
    for r in range(args.repeats):
        order = ("base", "change") if r % 2 == 0 else ("change", "base")
        for b in benches:
            for a in order:
                j = os.path.join(out, "json", f"{a}-{b}-r{r}.json")
                lg = os.path.join(out, "logs", f"{a}-{b}-r{r}.log")
                if os.path.exists(j):
                    os.remove(j)
                t0 = time.time()
                env = dict(os.environ, MLA_BENCH_JSON=j)
                with open(lg, "w") as f:
                    try:
                        rc = subprocess.run([bins[(a, b)], *args.bench_args], stdout=f,
                                            stderr=subprocess.STDOUT, env=env,
                                            timeout=args.run_timeout).returncode
                    except subprocess.TimeoutExpired:
                        rc = "timeout"
                dt = time.time() - t0
                print(f"perf_compare: [{r + 1}/{args.repeats}] {a:6} {b}: exit {rc}, {dt:.1f} s "
                      f"(elapsed {time.time() - t_all:.0f} s)", flush=True)
                if rc == 77:
                    raise Infra(f"{a} {b}: no CUDA device (exit 77; log {lg})")
                if rc != 0:
                    if a == "change":
                        print(f"perf_compare: the change's {b} failed (exit {rc}; log {lg})",
                              file=sys.stderr)
                        return EXIT_BYTES
                    raise Infra(f"the base's {b} failed (exit {rc}; log {lg})")
                files[a].append(j)
    return compare(files["base"], files["change"], args.threshold, args.require_identical, out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    a = sub.add_parser("ab", help="run both arms' benchmarks interleaved, then compare")
    a.add_argument("--base", required=True)
    a.add_argument("--change", required=True)
    a.add_argument("--repeats", type=int, default=5)
    a.add_argument("--benches", default="bench_dense,bench_kpool")
    a.add_argument("--bench-args", nargs="*", default=[])
    a.add_argument("--run-timeout", type=float, default=300)
    a.add_argument("--out", default="out/perf-ab")
    c = sub.add_parser("compare", help="compare JSON files already written")
    c.add_argument("--base", nargs="+", required=True)
    c.add_argument("--change", nargs="+", required=True)
    c.add_argument("--out")
    for p in (a, c):
        p.add_argument("--threshold", type=float, default=0.05)
        p.add_argument("--require-identical", action="store_true")
    args = ap.parse_args(argv)
    try:
        if args.verb == "ab":
            if args.repeats < 2:
                raise Infra("--repeats must be >= 2 (>= 4 for a 95 % interval)")
            return ab(args)
        return compare(args.base, args.change, args.threshold, args.require_identical, args.out)
    except Infra as e:
        print(f"perf_compare: {e} (exit 3)", file=sys.stderr)
        return EXIT_INFRA


if __name__ == "__main__":
    sys.exit(main())
