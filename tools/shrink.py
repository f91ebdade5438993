#!/usr/bin/env python3
"""tools/shrink.py: reduce a failing golden-case check to the smallest geometry and the simplest
inputs that still fail the same way (docs/shrink.md).

  shrink.py --binary bin/dense_gpu_goldens_test --check attn_absorbed --base glm5_decode
            [--geom FIELD=VALUE ...] [--seed N] [--golden DIR] [--timeout S] [--out DIR]
            [--name NAME]

The check runs as the suite's custom case (<suite>/custom__<check>, tests/lib/case.h:
$MLA_CUSTOM_CASE = {"base", "geom", "seed"}): the base case's stages at the given geometry,
computed in memory, the GPU against the oracle. The first run must fail; its signature (the
tensor the comparator names, or a crash / timeout) is what every reduction must keep. Then, to a
fixpoint, each geometry field of the family (dense: t_q, t_kv, n_head, kv_rank, d_rope, d_nope,
d_v; k-pool: t_q, t_kv, n_head, idx_heads, idx_dim, pool, n_pools, select_k, width, state_rows,
first_pos) is reduced to the smallest value that still fails with the same signature: its floor
first, then a binary search below the current value (d_rope, kv_rank, idx_dim stay even); an
invalid geometry fails differently (a contract code, an oracle error) and counts as not failing.
Then the inputs: the small-integer fill (few distinct values), then the seed 1.

Writes OUT/<name>.json (the regression input: base, geom, seed, check, signature), prints the
one-line description (every field before -> after) and the replay command.

  shrink.py --replay CASE.json [--bin DIR] --xml FILE
      run a committed regression case (tests/regressions/) as its suite's custom case, the JUnit
      report kept to that test and named regression_<name> (run-gpu-tier.sh's step). Exit 0 when a failing
case was reduced (or was already minimal), 1 when the first run did not fail, 2 on bad arguments.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

DENSE = ["t_q", "t_kv", "n_head", "kv_rank", "d_rope", "d_nope", "d_v"]
KPOOL = ["t_q", "t_kv", "n_head", "idx_heads", "idx_dim", "pool", "n_pools", "select_k", "width",
         "state_rows", "first_pos"]
FLOOR = {"d_rope": 0, "first_pos": 0, "state_rows": 0}
EVEN = {"d_rope", "kv_rank", "idx_dim"}


def suite_of(binary):
    b = os.path.basename(binary)
    return "dense_gpu" if b.startswith("dense") else "kpool_gpu" if b.startswith("kpool") else None


def run_check(a, geom, seed):
    """(signature, seconds): None when the check passed (or skipped), else the failure's kind."""
    desc = {"base": a.base, "geom": geom, "seed": seed}
    env = dict(os.environ, MLA_CUSTOM_CASE=json.dumps(desc, sort_keys=True))
    if a.golden:
        env["MLA_GOLDEN_DIR"] = a.golden
    t0 = time.time()
    try:
        p = subprocess.run([a.binary, "--verbose", f"--filter={a.suite}/custom__{a.check}"],
                           env=env, capture_output=True, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.time() - t0
    out = re.sub(r"\x1b\[[0-9;]*m", "", p.stdout + p.stderr)
    dt = time.time() - t0
    if p.returncode == 0 and "Tested: 0" in out:
        return "skipped", dt
    if p.returncode == 0:
        return None, dt
    m = re.search(r"FAIL: case custom, tensor (\w+)", out)
    if m:
        return f"tensor {m.group(1)}", dt
    if re.search(r"CRASH|signal|crash", out):
        return "crash", dt
    m = re.search(r"custom__\w+: (.*)", out)
    return "other: " + (m.group(1)[:80] if m else f"exit {p.returncode}"), dt


def shrink_field(a, geom, seed, sig, f, log):
    """The smallest value of field f that still fails with sig (the others fixed): the floor
    first, then a binary search between it and the current value, whose upper end always fails
    (so a non-monotone field still ends on a failing value). Even fields step by 2. Returns
    (value, runs)."""
    lo, v = FLOOR.get(f, 1), int(geom[f])
    step = 2 if f in EVEN else 1
    if f in EVEN and lo % 2:
        lo += 1
    runs = 0

    def fails(x):
        nonlocal runs
        s, dt = run_check(a, dict(geom, **{f: x}), seed)
        runs += 1
        log(f"shrink: {f} {v} -> {x}: {s or 'passes'}{' (same failure)' if s == sig else ''}"
            f" ({dt:.1f} s)")
        return s == sig

    if v <= lo:
        return v, runs
    if fails(lo):
        return lo, runs
    bad_lo, hi = lo, v  # bad_lo does not fail (same way), hi fails
    while (hi - bad_lo) > step and runs < a.max_runs:
        mid = bad_lo + ((hi - bad_lo) // (2 * step)) * step
        if mid <= bad_lo:
            mid = bad_lo + step
        if mid >= hi:
            break
        if fails(mid):
            hi = mid
        else:
            bad_lo = mid
    return hi, runs


def base_geometry(golden, base):
    path = os.path.join(golden, "manifest.json")
    with open(path) as f:
        m = json.load(f)
    for c in m["cases"]:
        if c["name"] == base:
            return {k: v for k, v in c["geometry"].items()}, c.get("seed")
    raise SystemExit(f"shrink: case {base} is not in {path}")


def replay(path, bin_dir, xml):
    """A committed regression case (tests/regressions/*.json, written below): its suite binary
    on the custom case, Criterion's JUnit report kept to that one test and named
    regression_<name> (so a skip without a GPU counts as skipped). Returns the binary's exit."""
    import xml.etree.ElementTree as ET
    with open(path) as f:
        r = json.load(f)
    name = "regression_" + os.path.basename(path)[:-len(".json")]
    keep = f"custom__{r['check']}"
    env = dict(os.environ, MLA_XML_OUTPUT=xml, MLA_CUSTOM_CASE=json.dumps(
        {"base": r["base"], "geom": r["geom"], "seed": r["seed"]}, sort_keys=True))
    rc = subprocess.run([os.path.join(bin_dir, f"{r['suite']}_goldens_test"), "--verbose",
                         f"--filter={r['suite']}/{keep}"], env=env).returncode
    if os.path.exists(xml) and os.path.getsize(xml):
        tree = ET.parse(xml)
        for ts in tree.getroot().iter("testsuite"):
            ts.set("name", name)
            for tc in ts.findall("testcase"):
                if tc.get("name") != keep:
                    ts.remove(tc)
            cases = ts.findall("testcase")
            ts.set("tests", str(len(cases)))
            for k, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
                ts.set(k, str(sum(tc.find(tag) is not None for tc in cases)))
            ts.set("disabled", "0")
        tree.write(xml, encoding="utf-8", xml_declaration=True)
    return rc


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--replay"]:  # shrink.py --replay CASE.json --bin DIR --xml FILE
        rp = argparse.ArgumentParser(prog="shrink.py --replay")
        rp.add_argument("--replay", required=True)
        rp.add_argument("--bin", default="bin")
        rp.add_argument("--xml", required=True)
        a = rp.parse_args(argv)
        return replay(a.replay, a.bin, a.xml)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--check", required=True, help="the GPU check, e.g. attn_absorbed, select")
    ap.add_argument("--base", required=True, help="a golden case (its geometry and stages)")
    ap.add_argument("--geom", nargs="*", default=[], help="FIELD=VALUE overrides of the start")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--golden", default=os.environ.get("MLA_GOLDEN_DIR", "golden"))
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--out", default="out/shrink")
    ap.add_argument("--name")
    ap.add_argument("--max-runs", type=int, default=200)
    a = ap.parse_args(argv)
    a.suite = suite_of(a.binary)
    if not a.suite:
        print("shrink: --binary must be a dense_gpu / kpool_gpu goldens test", file=sys.stderr)
        return 2
    geom, seed = base_geometry(a.golden, a.base)
    for g in a.geom:
        k, _, v = g.partition("=")
        try:
            geom[k] = float(v) if "." in v else int(v)
        except ValueError:
            print(f"shrink: --geom {g}: want FIELD=NUMBER", file=sys.stderr)
            return 2
    seed = a.seed if a.seed is not None else (seed or 1)
    start = dict(geom)
    sig, dt = run_check(a, geom, seed)
    runs = 1
    print(f"shrink: start {a.base} {a.check}: {sig or 'passes'} ({dt:.1f} s)", flush=True)
    if not sig or sig == "skipped":
        print("shrink: the start does not fail (or was skipped: no GPU?); nothing to shrink",
              file=sys.stderr)
        return 1
    fields = [f for f in (DENSE if a.suite == "dense_gpu" else KPOOL) if f in geom]
    log = lambda msg: print(msg, flush=True)
    changed = True
    while changed and runs < a.max_runs:
        changed = False
        for f in fields:
            v, n = shrink_field(a, geom, seed, sig, f, log)
            runs += n
            if v != geom[f]:
                geom = dict(geom, **{f: v})
                changed = True
    for extra, val in (("small_int", 1),):
        if geom.get(extra) != val:
            trial = dict(geom, **{extra: val})
            s, _ = run_check(a, trial, seed)
            runs += 1
            print(f"shrink: inputs {extra}={val}: {s or 'passes'}{' (kept)' if s == sig else ''}")
            if s == sig:
                geom = trial
    if seed != 1:
        s, _ = run_check(a, geom, 1)
        runs += 1
        if s == sig:
            seed = 1
    diff = ", ".join(f"{k} {start.get(k, 0)} -> {v}" for k, v in geom.items()
                     if start.get(k) != v)
    name = a.name or f"{a.base}__{a.check}"
    desc = {"base": a.base, "check": a.check, "suite": a.suite, "geom": geom, "seed": seed,
            "signature": sig,
            "description": f"{a.base} {a.check} ({sig}): {diff or 'already minimal'}"}
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, name + ".json")
    with open(path, "w") as f:
        json.dump(desc, f, indent=1, sort_keys=True)
        f.write("\n")
    case_json = json.dumps({"base": a.base, "geom": geom, "seed": seed}, sort_keys=True)
    print(f"shrink: {desc['description']} ({runs} runs)")
    print(f"shrink: wrote {path}")
    print(f"shrink: replay: MLA_CUSTOM_CASE='{case_json}' {a.binary} "
          f"--filter='{a.suite}/custom__{a.check}'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
