"""tools/shrink_test.py: the shrinker (tools/shrink.py) on the CPU, against three planted bugs in
a fake golden suite binary: a script that reads $MLA_CUSTOM_CASE as the real suites do
(tests/lib/case.h) and prints Criterion's verdict lines and the comparator's failure line.

  - each planted bug, found at a production-size start, is reduced to its minimal failing
    geometry (and the small-integer fill when it keeps failing), with the description, the
    regression JSON and the replay command;
  - a reduction that fails differently (another tensor, a contract code) is not kept;
  - a start that passes exits 1; a binary of no known suite exits 2.

And the fuzz mode (--repro) against a planted fuzz target (testdata/shrink_planted_fuzz.c: the
real producer and FUZZ_ASSERT of fuzz/fuzz_helpers.h, the entry shim and the regression driver):
  - the draw log ($FUZZ_DRAW_LOG) changes nothing the target decodes, and logs every draw as
    the producer made it (restated here in Python);
  - a production-size reproducer is reduced by its draws to the planted minimum (another
    assertion below it is not kept), its front bytes dropped, with the .bin, the JSON, the
    description and the replay commands; --replay of the JSON fails with its own JUnit report;
  - a reproducer that passes exits 1.
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
for other in ("absorb_q", "attn_absorbed", "select", "score"):  # Criterion --verbose lists the
    if other != check:                                         # filtered-out tests first
        print(f"[SKIP] {SUITE}::custom__{other}: Test is disabled")
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
if bug == "int32" and g["pool"] >= 3:  # the select check: a reproducer line, then the verdict
    print(f"kpool_gpu/custom__{check}: reproducer written: /tmp/repro-kpool_gpu-custom__{check}-idx.safetensors")
    print(f"[----]   kpool_gpu/custom__{check}: case custom, tensor idx [{g['t_q']} x {g['width']}] "
          f"int32: {g['pool']} element(s) differ (radix vs oracle); first at [0][0]")
    print(f"[FAIL] {SUITE}::custom__{check}: (0.10s)")
    sys.exit(1)
if bug == "unwritten" and g["pool"] >= 5:  # a testbed message whose count scales with the shape
    print(f"[----]   kpool_gpu/custom__{check}: radix run 1 left {g['width'] * g['t_q']} idx "
          "entries equal to GPU_POISON_WORD")
    print(f"[FAIL] {SUITE}::custom__{check}: (0.10s)")
    sys.exit(1)
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


def shrink_select(bug):
    """The planted kpool select bug shrunk from glm5_next_kpool_pool64; its regression JSON."""
    with tempfile.TemporaryDirectory() as t:
        b = setup(t, "kpool_gpu")
        rc, out, err = shrink(t, b, bug, "--check", "select", "--base",
                              "glm5_next_kpool_pool64", "--name", bug)
        assert rc == 0, (out, err)
        return json.load(open(f"{t}/out/{bug}.json"))


@test
def a_message_failure_keeps_its_own_signature():
    # the H200 run of 2026-12-01: the select check failed with a testbed message, and the
    # signature was read from a filtered-out test's "Test is disabled" line, so every run
    # (invalid geometries included) "failed the same way" and the case shrank to nonsense
    r = shrink_select("unwritten")
    assert r["signature"] == ("other: radix run N left N idx entries equal to "
                              "GPU_POISON_WORD"), r
    assert r["geom"]["pool"] == 5 and r["geom"]["t_q"] == 1, r["geom"]


@test
def an_int32_failure_is_named_by_its_tensor_and_pair():
    # the H200 run of 2026-12-01 (call 3): the signature was the "reproducer written" line
    r = shrink_select("int32")
    assert r["signature"] == "tensor idx (radix vs oracle)", r
    assert r["geom"]["pool"] == 3, r["geom"]


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


# ---- fuzz reproducers (--repro) --------------------------------------------------------------
PLANTED = os.path.join(HERE, "shrink_planted_fuzz")  # Bazel's build of it (a data dependency)
POOLS = [1, 2, 3, 4, 7, 16, 64]
BUG = "FUZZ_ASSERT failed: !(np > 300 && pool % 2 == 1)"
OTHER = "FUZZ_ASSERT failed: !(np < 40 && pool == 7)"


def planted_binary(t):
    """The planted fuzz target: Bazel's, else (run from a checkout) compiled here with cc."""
    if os.path.exists(PLANTED):
        return PLANTED
    root, out = os.path.dirname(HERE), f"{t}/shrink_planted_fuzz"
    subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-D_DEFAULT_SOURCE", "-I", root,
                    f"{HERE}/testdata/shrink_planted_fuzz.c", f"{root}/fuzz/fuzz_entry.c",
                    f"{root}/fuzz/regression_driver.c", "-o", out], check=True)
    return out


def decode(data):
    """The planted target's draws, with fuzz/fuzz_helpers.h's producer restated: the values and
    each draw as the log should show it (kind, offset, bytes, lo, hi, value)."""
    size, draws = len(data), []

    def take():
        nonlocal size
        v = 0
        for _ in range(4):
            if size == 0:
                break
            v = (v << 8) | data[size - 1]
            size -= 1
        return v

    def rng(lo, hi):
        off = size
        v = take() << 32
        v |= take()
        r = lo + v % (hi - lo + 1)
        draws.append(("range", off, off - size, lo, hi, r))
        return r

    def u32():
        off = size
        v = take()
        draws.append(("u32", off, off - size, 0, 0xFFFFFFFF, v))
        return v

    tq, n_pools, pool = rng(1, 4), rng(0, 5000), POOLS[rng(0, 6)]
    seed = u32()
    extra = rng(0, 9) if tq > 2 else -1
    return {"t_q": tq, "n_pools": n_pools, "pool": pool, "seed": seed, "extra": extra,
            "front": size}, draws


def encode(draws, front):
    """An input whose draws return the values asked for, the high words nonzero (so the shrinker
    has real bytes to rewrite): draws = [(lo, hi, value) for fuzz_range, or (None, None, value)
    for fuzz_u32], in draw order; front = the bulk bytes."""
    tail = b""
    for k, (lo, hi, value) in enumerate(draws):
        if lo is None:
            words = [value]
        else:
            span, hw = hi - lo + 1, 0x1234 + 77 * k
            full = (hw << 32) + (value - lo - (hw << 32) % span) % span
            words = [full >> 32, full & 0xFFFFFFFF]
        for w in words:  # read from the end, the top byte first
            tail = w.to_bytes(4, "little") + tail
    return bytes(front) + tail


def big_repro():
    """A production-size reproducer: t_q 4 (so the conditional extra draw is made), n_pools
    4000, pool 7, seed 0xDEADBEEF, extra 5, 2 KB of front bytes."""
    front = bytes((i * 131 + 7) % 251 for i in range(2048))
    return encode([(1, 4, 4), (0, 5000, 4000), (0, 6, POOLS.index(7)), (None, None, 0xDEADBEEF),
                   (0, 9, 5)], front)


def run_planted(b, path, log=None):
    env = {k: v for k, v in os.environ.items() if k != "FUZZ_DRAW_LOG"}
    env["FUZZ_REPRO_DIR"] = os.path.dirname(path)
    if log:
        env["FUZZ_DRAW_LOG"] = log
    p = subprocess.run([b, path], env=env, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


@test
def draw_log_leaves_decoding_unchanged():
    """The same values decoded with and without $FUZZ_DRAW_LOG (and as the producer restated
    here decodes them), every draw logged with its offset, bytes, range and value, the case
    line too; short inputs included (draws that run out of bytes)."""
    with tempfile.TemporaryDirectory() as t:
        b = planted_binary(t)
        inputs = [big_repro(), b"", bytes([9, 8, 7]), bytes(range(11)), bytes(range(30)),
                  bytes((i * 37) % 256 for i in range(100))]
        for k, data in enumerate(inputs):
            path = f"{t}/in{k}.bin"
            with open(path, "wb") as f:
                f.write(data)
            rc0, out0, _ = run_planted(b, path)
            rc1, out1, _ = run_planted(b, path, log=f"{t}/draws{k}.log")
            assert (rc0, out0) == (rc1, out1), (k, rc0, out0, rc1, out1)
            want, draws = decode(data)
            line = next(x for x in out0.splitlines() if x.startswith("decoded "))
            got = dict(zip(line.split()[1::2], line.split()[2::2]))
            assert {k2: int(got[k2], 0) for k2 in want} == want, (k, got, want)
            log = open(f"{t}/draws{k}.log").read().splitlines()
            assert log[0] == f"input {len(data)} shrink_planted", log
            logged = [tuple(int(x) if x.lstrip("-").isdigit() else x for x in ln.split()[1:])
                      for ln in log if ln.startswith("draw ")]
            assert logged == draws, (k, logged, draws)
            assert log[-1].startswith("case t_q "), log


@test
def planted_fuzz_reproducer_shrinks_to_its_minimum():
    """n_pools 4000 -> 301 (0..39 with pool 7 fails another way: not kept), pool 7 -> 1, t_q
    4 -> 1 (the extra draw goes, its bytes join the front), seed -> 0, the front dropped."""
    with tempfile.TemporaryDirectory() as t:
        b = planted_binary(t)
        with open(f"{t}/big.bin", "wb") as f:
            f.write(big_repro())
        p = subprocess.run([sys.executable, TOOL, "--repro", f"{t}/big.bin", "--binary", b,
                            "--out", f"{t}/out", "--name", "pool_odd", "--golden", "ignored"],
                           capture_output=True, text=True)
        assert p.returncode == 0, (p.stdout, p.stderr)
        r = json.load(open(f"{t}/out/pool_odd.json"))
        data = open(f"{t}/out/pool_odd.bin", "rb").read()
        got, _ = decode(data)
        assert got == {"t_q": 1, "n_pools": 301, "pool": 1, "seed": 0, "extra": -1,
                       "front": 0}, got
        assert len(data) == 28, data  # three fuzz_range draws and a seed, nothing else
        assert r["kind"] == "fuzz" and r["target"] == "shrink_planted", r
        assert r["signature"] == BUG and r["input"] == "pool_odd.bin", r
        assert OTHER in p.stdout, "the other failure was met and not kept"
        for part in ("n_pools 4000 -> 301", "pool 7 -> 1", "t_q 4 -> 1",
                     "seed 0xDEADBEEF -> 0x00000000", "front 2048 -> 0", "2084 -> 28 bytes"):
            assert part in r["description"], (part, r["description"])
        assert r["case_after"].startswith("t_q 1 n_pools 301 pool 1 "), r
        assert r["replay"] == ("ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 "
                               "bin/shrink_planted_fuzzer pool_odd.bin"), r
        assert "bazel run //fuzz:shrink_planted_regression -- " in p.stdout, p.stdout
        assert r["runs"] < 150, r["runs"]  # binary searches, not walks down
        rc, _, err = run_planted(b, f"{t}/out/pool_odd.bin")
        assert rc != 0 and BUG in err, (rc, err)

        # --replay of the fuzz JSON: bin/<target>_fuzzer on its input, a failing JUnit report
        import shutil
        import xml.etree.ElementTree as ET
        os.makedirs(f"{t}/bin")
        shutil.copy(b, f"{t}/bin/shrink_planted_fuzzer")
        with open(f"{t}/out/fixed.bin", "wb") as f:
            f.write(bytes(28))  # n_pools 0, pool 1: passes
        with open(f"{t}/out/fixed.json", "w") as f:
            json.dump(dict(r, input="fixed.bin"), f)
        for name, fails in (("pool_odd", 1), ("fixed", 0)):
            p = subprocess.run([sys.executable, TOOL, "--replay", f"{t}/out/{name}.json",
                                "--bin", f"{t}/bin", "--xml", f"{t}/{name}.xml"],
                               capture_output=True, text=True, cwd=t)
            assert (p.returncode != 0) == bool(fails), (name, p.returncode, p.stdout, p.stderr)
            ts = ET.parse(f"{t}/{name}.xml").getroot().find("testsuite")
            assert ts.get("name") == f"regression_{name}" and ts.get("tests") == "1", ts.attrib
            assert ts.get("failures") == str(fails), ts.attrib
            assert [tc.get("name") for tc in ts] == ["shrink_planted"]
            failure = ts.find("testcase").find("failure")
            assert (failure is not None) == bool(fails)
            if fails:
                assert BUG in failure.get("message") and BUG in failure.text, failure.attrib


@test
def a_passing_reproducer_exits_1():
    with tempfile.TemporaryDirectory() as t:
        b = planted_binary(t)
        with open(f"{t}/ok.bin", "wb") as f:
            f.write(encode([(1, 4, 2), (0, 5000, 4000), (0, 6, POOLS.index(16)),
                            (None, None, 5)], b"front"))
        p = subprocess.run([sys.executable, TOOL, "--repro", f"{t}/ok.bin", "--binary", b,
                            "--out", f"{t}/out"], capture_output=True, text=True)
        assert p.returncode == 1 and "does not fail" in p.stderr, (p.returncode, p.stderr)
        assert not os.path.exists(f"{t}/out"), "nothing written"


if __name__ == "__main__":
    sys.exit(main("shrink_test"))
