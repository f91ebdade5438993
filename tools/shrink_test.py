"""tools/shrink_test.py: the shrinker (tools/shrink.py) on the CPU, against three planted bugs in
a fake golden suite binary: a script that reads $MLA_CUSTOM_CASE as the real suites do
(tests/lib/case.h) and prints Criterion's verdict lines and the comparator's failure line.

  - each planted bug, found at a production-size start, is reduced to its minimal failing
    geometry (and the small-integer fill when it keeps failing), with the description, the
    regression JSON and the replay command;
  - a reduction that fails differently (another tensor, a contract code) is not kept;
  - a start that passes exits 1; a binary of no known suite exits 2.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pycheck import main, test  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "shrink.py")

# The fake suite: BUG selects the planted condition; every run is appended to RUNS.
FAKE = r'''#!/usr/bin/env python3
import json, os, sys
d = json.loads(os.environ["MLA_CUSTOM_CASE"])
g, bug = d["geom"], os.environ["BUG"]
check = sys.argv[-1].split("custom__")[1]
with open(os.environ["RUNS"], "a") as f:
    f.write(json.dumps(g, sort_keys=True) + "\n")
def xml(status):  # Criterion's JUnit report: the filtered-out tests listed as skipped too
    if "MLA_XML_OUTPUT" in os.environ:
        with open(os.environ["MLA_XML_OUTPUT"], "w") as f:
            f.write('<?xml version="1.0"?><testsuites><testsuite name="{SUITE}" tests="2">'
                    f'<testcase name="custom__{check}">{status}</testcase>'
                    '<testcase name="custom__other"><skipped/></testcase></testsuite></testsuites>')
def fail(tensor):
    xml('<failure message="x"/>')
    print(f"[----]   FAIL: case custom, tensor {tensor} (got = kernel, ref = oracle)")
    print(f"[FAIL] {SUITE}::custom__{check}: (0.10s)")
    print("[====] Synthesis: Tested: 1 | Passing: 0 | Failing: 1 | Crashing: 0")
    sys.exit(1)
if g["d_rope"] % 2 if "d_rope" in g else False:
    print(f"[----]   custom__{check}: launch returned 40001 (odd d_rope)")
    print(f"[FAIL] {SUITE}::custom__{check}: (0.01s)")
    sys.exit(1)
if bug == "partial_head_tile" and g["kv_rank"] < 64:
    fail("q_lat")  # another failure: must not be kept
if bug == "partial_head_tile" and g["n_head"] % 8 != 0 and g["t_kv"] >= 33:
    fail("o_lat")
if bug == "late_rows" and g["t_kv"] - g["t_q"] >= 300 and g.get("small_int", 0) in (0, 1):
    fail("o_lat")
if bug == "pool_tail" and g["pool"] >= 33 and g["width"] >= g["pool"]:
    fail("idx")
xml("")
print(f"[PASS] {SUITE}::custom__{check}: (0.10s)")
print("[====] Synthesis: Tested: 1 | Passing: 1 | Failing: 0 | Crashing: 0")
'''

MANIFEST = {"cases": [
    {"name": "glm5_decode", "seed": 5, "geometry": {
        "n_head": 64, "kv_rank": 512, "d_rope": 64, "d_nope": 192, "d_v": 256, "t_q": 1,
        "t_kv": 4096, "rope_base": 1000000.0, "scale": 0.0625}},
    {"name": "glm5_next_kpool_pool64", "seed": 9, "geometry": {
        "n_head": 8, "kv_rank": 512, "d_nope": 256, "d_v": 256, "t_q": 3, "t_kv": 1089,
        "idx_heads": 32, "idx_dim": 128, "pool": 64, "select_k": 4, "width": 319,
        "always_tail": 1, "first_pos": 1086, "n_pools": 17}},
]}


def setup(t, suite):
    os.makedirs(f"{t}/bin")
    os.makedirs(f"{t}/golden")
    with open(f"{t}/golden/manifest.json", "w") as f:
        json.dump(MANIFEST, f)
    b = f"{t}/bin/{suite}_goldens_test"
    with open(b, "w") as f:
        f.write(FAKE.replace("{SUITE}", suite).replace("SUITE = None", ""))
    os.chmod(b, 0o755)
    return b


def shrink(t, b, bug, *args):
    env = dict(os.environ, BUG=bug, RUNS=f"{t}/runs.jsonl")
    p = subprocess.run([sys.executable, TOOL, "--binary", b, "--golden", f"{t}/golden", "--out",
                        f"{t}/out", *args], capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


@test
def planted_partial_head_tile_bug_shrinks_to_its_minimum():
    with tempfile.TemporaryDirectory() as t:
        b = setup(t, "dense_gpu")
        rc, out, err = shrink(t, b, "partial_head_tile", "--check", "attn_absorbed", "--base",
                              "glm5_decode", "--geom", "n_head=41", "--name", "pht")
        assert rc == 0, (out, err)
        r = json.load(open(f"{t}/out/pht.json"))
        g = r["geom"]
        # n_head 41 -> 1 (1 % 8 != 0), t_kv 4096 -> 33; kv_rank stays >= 64 (below it fails
        # another way), d_rope even down to 0, t_q 1
        assert (g["n_head"], g["t_kv"], g["t_q"], g["d_rope"]) == (1, 33, 1, 0), g
        assert g["kv_rank"] == 64, g  # the smallest even kv_rank that fails the same way
        assert g["d_nope"] == 1 and g["d_v"] == 1, g
        assert r["signature"] == "tensor o_lat" and g["small_int"] == 1, r
        assert "n_head 41 -> 1" in r["description"] and "t_kv 4096 -> 33" in r["description"]
        assert "MLA_CUSTOM_CASE=" in out and "--filter='dense_gpu/custom__attn_absorbed'" in out
        runs = open(f"{t}/runs.jsonl").read().count("\n")
        assert runs < 120, runs  # binary search, not a walk down


@test
def planted_late_rows_bug_keeps_its_relation():
    with tempfile.TemporaryDirectory() as t:
        b = setup(t, "dense_gpu")
        rc, out, err = shrink(t, b, "late_rows", "--check", "attn_absorbed", "--base",
                              "glm5_decode", "--geom", "t_q=4", "--name", "late")
        assert rc == 0, (out, err)
        g = json.load(open(f"{t}/out/late.json"))["geom"]
        assert g["t_kv"] - g["t_q"] == 300 and g["t_q"] == 1, g


@test
def planted_pool_tail_bug_in_the_kpool_family():
    with tempfile.TemporaryDirectory() as t:
        b = setup(t, "kpool_gpu")
        rc, out, err = shrink(t, b, "pool_tail", "--check", "select", "--base",
                              "glm5_next_kpool_pool64", "--name", "tail")
        assert rc == 0, (out, err)
        g = json.load(open(f"{t}/out/tail.json"))["geom"]
        assert g["pool"] == 33 and g["width"] == 33, g
        assert g["t_q"] == 1 and g["idx_heads"] == 1 and g["first_pos"] == 0, g


@test
def a_passing_start_and_an_unknown_binary():
    with tempfile.TemporaryDirectory() as t:
        b = setup(t, "dense_gpu")
        rc, _, err = shrink(t, b, "partial_head_tile", "--check", "attn_absorbed", "--base",
                            "glm5_decode")  # n_head 64: passes
        assert rc == 1 and "does not fail" in err, (rc, err)
        rc, _, err = shrink(t, "/bin/true", "x", "--check", "c", "--base", "glm5_decode")
        assert rc == 2, (rc, err)


@test
def replay_runs_a_regression_case_with_its_own_report():
    """shrink.py --replay (run-gpu-tier.sh's regression_<name> step): the suite binary on the
    custom case; the JUnit report keeps that one test, named regression_<name>; the exit is the
    binary's."""
    import xml.etree.ElementTree as ET
    with tempfile.TemporaryDirectory() as t:
        setup(t, "kpool_gpu")
        for name, geom, rc_want, fails in (("tail", {"pool": 40, "width": 40}, 1, 1),
                                          ("ok", {"pool": 8, "width": 8}, 0, 0)):
            with open(f"{t}/{name}.json", "w") as f:
                json.dump({"base": "glm5_next_kpool_pool64", "suite": "kpool_gpu",
                           "check": "select", "geom": geom, "seed": 1}, f)
            env = dict(os.environ, BUG="pool_tail", RUNS=f"{t}/runs.jsonl")
            p = subprocess.run([sys.executable, TOOL, "--replay", f"{t}/{name}.json", "--bin",
                                f"{t}/bin", "--xml", f"{t}/{name}.xml"], env=env,
                               capture_output=True, text=True)
            assert p.returncode == rc_want, (name, p.returncode, p.stdout, p.stderr)
            ts = ET.parse(f"{t}/{name}.xml").getroot().find("testsuite")
            assert ts.get("name") == f"regression_{name}" and ts.get("tests") == "1", ts.attrib
            assert [tc.get("name") for tc in ts] == ["custom__select"]
            assert ts.get("failures") == str(fails) and ts.get("skipped") == "0", ts.attrib


if __name__ == "__main__":
    sys.exit(main("shrink_test"))
