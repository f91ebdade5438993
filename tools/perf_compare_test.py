"""tools/perf_compare_test.py: the perf gate (tools/perf_compare.py) on synthetic benchmark JSON
and, end to end, on fake benchmark binaries (scripts that write JSON through MLA_BENCH_JSON):

  - the exact Mann-Whitney interval index against the published critical values;
  - a change that doubles one kernel's time exits 2 and names that kernel, the other rows stay
    within noise, and the base and change runs are interleaved (ABBA);
  - identical / differing / nondeterministic output hashes, --require-identical exits 1;
  - the same build against itself exits 0;
  - infrastructure problems exit 3: a missing binary, a base benchmark that fails, no GPU
    (exit 77), a row in one arm only, a malformed file; a failing change benchmark exits 1.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf_compare as pc  # noqa: E402
from pycheck import main, test  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "perf_compare.py")


def run(*args):
    p = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


@test
def mann_whitney_critical_values():
    # k - 1 is the two-sided 5 % critical value of U (tables: n = m = 4: 0, 5: 2, 6: 5, 8: 13;
    # n = 4, m = 6: 2); n = m = 3 has none (min p = 0.1)
    for (n, m), want in {(3, 3): 0, (4, 4): 1, (5, 5): 3, (6, 6): 6, (8, 8): 14,
                         (4, 6): 3}.items():
        got = pc.mann_whitney_k(n, m)
        assert got == want, ((n, m), got, want)


def rows(times, hashes=None, bench="bench_dense"):
    return [{"bench": bench, "kernel": k, "shape": "decode", "arm": "", "median_us": t,
             "p10_us": t * 0.99, "p90_us": t * 1.01,
             **({"out_sha256": hashes[k]} if hashes else {})} for k, t in times.items()]


H = {"absorb_q": "a" * 64, "decompress_v": "b" * 64, "attn_absorbed": "c" * 64}


def write_runs(d, arm, n, times, hashes=H, jitter=0.01, seed=1):
    rng = random.Random(seed)
    files = []
    for r in range(n):
        t = {k: v * (1 + rng.uniform(-jitter, jitter)) for k, v in times.items()}
        p = os.path.join(d, f"{arm}-{r}.json")
        with open(p, "w") as f:
            json.dump(rows(t, hashes), f)
        files.append(p)
    return files


BASE_T = {"absorb_q": 14.0, "decompress_v": 21.0, "attn_absorbed": 240.0}


@test
def a_slowed_kernel_exits_2_and_is_named():
    with tempfile.TemporaryDirectory() as d:
        b = write_runs(d, "base", 5, BASE_T)
        c = write_runs(d, "change", 5, dict(BASE_T, decompress_v=42.0), seed=2)
        rc, out, err = run("compare", "--base", *b, "--change", *c, "--out", f"{d}/o")
        assert rc == 2, (rc, out, err)
        last = out.strip().splitlines()[-1]
        assert "1 slower beyond noise: decompress_v (decode)" in last, last
        assert "3 identical" in last, last
        res = json.load(open(f"{d}/o/perf-compare.json"))
        v = {r["kernel"]: r for r in res["rows"]}
        assert v["decompress_v"]["verdict"] == "SLOWER" and v["decompress_v"]["hi"] < 0.6, v
        assert v["absorb_q"]["verdict"] == "within noise", v
        assert v["attn_absorbed"]["lo"] < 1 < v["attn_absorbed"]["hi"], v
        assert os.path.exists(f"{d}/o/perf-compare.md")


@test
def the_same_build_against_itself_is_clean_and_faster_is_reported():
    with tempfile.TemporaryDirectory() as d:
        b = write_runs(d, "base", 5, BASE_T)
        c = write_runs(d, "change", 5, BASE_T, seed=3)
        rc, out, _ = run("compare", "--base", *b, "--change", *c)
        assert rc == 0 and "0 slower" in out and "0 faster" in out, out
        c2 = write_runs(d, "fast", 5, dict(BASE_T, attn_absorbed=70.0), seed=4)
        rc, out, _ = run("compare", "--base", *b, "--change", *c2)
        assert rc == 0 and "1 faster" in out, out


@test
def bytes_identical_differs_and_nondeterministic():
    with tempfile.TemporaryDirectory() as d:
        b = write_runs(d, "base", 4, BASE_T)
        c = write_runs(d, "change", 4, BASE_T, hashes=dict(H, absorb_q="d" * 64), seed=5)
        rc, out, _ = run("compare", "--base", *b, "--change", *c)
        assert rc == 0 and "absorb_q (decode): differs" in out, out
        rc, out, _ = run("compare", "--base", *b, "--change", *c, "--require-identical")
        assert rc == 1, (rc, out)
        # one change run's hash differs from the others: nondeterministic
        c3 = write_runs(d, "c3", 3, BASE_T, seed=6) + write_runs(
            d, "c3b", 1, BASE_T, hashes=dict(H, attn_absorbed="e" * 64), seed=7)
        rc, out, _ = run("compare", "--base", *b, "--change", *c3)
        assert "attn_absorbed (decode): change nondeterministic" in out, out
        nohash = write_runs(d, "nh", 4, BASE_T, hashes=None, seed=8)
        rc, out, _ = run("compare", "--base", *b, "--change", *nohash, "--require-identical")
        assert rc == 0 and "3 without hashes" in out, (rc, out)


@test
def too_few_repeats_give_no_interval():
    with tempfile.TemporaryDirectory() as d:
        b = write_runs(d, "base", 3, BASE_T)
        c = write_runs(d, "change", 3, dict(BASE_T, decompress_v=42.0), seed=2)
        rc, out, _ = run("compare", "--base", *b, "--change", *c)
        assert rc == 0 and "too few repeats" in out and "(no interval)" in out, (rc, out)
        rc, _, err = run("compare", "--base", b[0], "--change", c[0])
        assert rc == 3 and "needs repeats" in err, (rc, err)


@test
def malformed_inputs_are_infrastructure_errors():
    with tempfile.TemporaryDirectory() as d:
        b = write_runs(d, "base", 4, BASE_T)
        c = write_runs(d, "change", 4, {"absorb_q": 14.0, "decompress_v": 21.0}, seed=2)
        rc, _, err = run("compare", "--base", *b, "--change", *c)
        assert rc == 3 and "attn_absorbed" in err and "(base)" in err, (rc, err)
        bad = os.path.join(d, "bad.json")
        with open(bad, "w") as f:
            f.write("{not json")
        rc, _, err = run("compare", "--base", *b, "--change", bad)
        assert rc == 3 and "cannot read" in err, (rc, err)
        with open(bad, "w") as f:
            json.dump([{"kernel": "x", "median_us": -1}], f)
        rc, _, err = run("compare", "--base", *b, "--change", bad)
        assert rc == 3 and "not a positive time" in err, (rc, err)


FAKE = r'''#!/usr/bin/env python3
# a fake benchmark: writes rows to $MLA_BENCH_JSON, logs its arm to ORDER_LOG
import json, os, random, sys
arm, slow, code = {arm!r}, {slow!r}, {code}
with open(os.environ["ORDER_LOG"], "a") as f:
    f.write(arm + "\n")
if code:
    sys.exit(code)
t = {{"absorb_q": 14.0, "decompress_v": 21.0}}
if slow:
    t[slow] *= 2
rng = random.Random()
json.dump([{{"bench": "bench_dense", "kernel": k, "shape": "decode", "arm": "",
            "median_us": v * (1 + rng.uniform(-0.01, 0.01)), "out_sha256": "ab" * 32}}
           for k, v in t.items()], open(os.environ["MLA_BENCH_JSON"], "w"))
'''


def fake_arm(d, name, slow=None, code=0):
    os.makedirs(os.path.join(d, name, "bin"))
    p = os.path.join(d, name, "bin", "bench_dense")
    with open(p, "w") as f:
        f.write(FAKE.format(arm=name, slow=slow, code=code))
    os.chmod(p, 0o755)
    return os.path.join(d, name)


@test
def ab_end_to_end_interleaved_on_fake_benchmarks():
    with tempfile.TemporaryDirectory() as d:
        os.environ["ORDER_LOG"] = f"{d}/order"
        base, change = fake_arm(d, "base"), fake_arm(d, "change", slow="decompress_v")
        rc, out, err = run("ab", "--base", base, "--change", change, "--repeats", "4",
                           "--benches", "bench_dense", "--out", f"{d}/o")
        assert rc == 2, (rc, out, err)
        assert "decompress_v (decode)" in out.strip().splitlines()[-1], out
        assert "2 identical" in out and "[4/4]" in out, out
        order = open(f"{d}/order").read().split()
        assert order == ["base", "change", "change", "base"] * 2, order
        assert len(os.listdir(f"{d}/o/json")) == 8
        # the same arm on both sides: clean
        rc, out, _ = run("ab", "--base", base, "--change", base, "--repeats", "4", "--benches",
                         "bench_dense", "--out", f"{d}/o2")
        assert rc == 0, (rc, out)


@test
def ab_failures():
    with tempfile.TemporaryDirectory() as d:
        os.environ["ORDER_LOG"] = f"{d}/order"
        base = fake_arm(d, "base")
        rc, _, err = run("ab", "--base", base, "--change", f"{d}/nowhere", "--benches",
                         "bench_dense", "--out", f"{d}/o")
        assert rc == 3 and "no executable bench_dense" in err, (rc, err)
        rc, _, err = run("ab", "--base", fake_arm(d, "b77", code=77), "--change", base,
                         "--benches", "bench_dense", "--out", f"{d}/o")
        assert rc == 3 and "no CUDA device" in err, (rc, err)
        rc, _, err = run("ab", "--base", fake_arm(d, "bfail", code=1), "--change", base,
                         "--benches", "bench_dense", "--out", f"{d}/o")
        assert rc == 3 and "the base's bench_dense failed" in err, (rc, err)
        rc, _, err = run("ab", "--base", base, "--change", fake_arm(d, "cfail", code=1),
                         "--benches", "bench_dense", "--out", f"{d}/o")
        assert rc == 1 and "the change's bench_dense failed" in err, (rc, err)
        rc, _, err = run("ab", "--base", base, "--change", base, "--repeats", "1", "--benches",
                         "bench_dense", "--out", f"{d}/o")
        assert rc == 3 and "--repeats" in err, (rc, err)


if __name__ == "__main__":
    sys.exit(main("perf_compare_test"))
