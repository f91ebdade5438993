#!/usr/bin/env python3
"""tools/shard.py and the summary it feeds (tools/summarize.py), with plain processes:
exact shard coverage and determinism over many random job lists and N in 1..8, the LPT balance
bound, the durations (file forms, median for the unrecorded, overrides), the CLI, merge of
synthetic shard outputs (counts add up; a failure in one shard fails the merge, a known one does
not; a shard that did not finish fails it), summarize.py's `where` map from placement.tsv, and
a <skipped> test case (tools/testlib.sh's convention) counted skipped, never passed.
Writes each check as a JUnit case to $XML_OUTPUT_FILE; exits 1 when one fails."""
import contextlib
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import shard  # noqa: E402
import summarize  # noqa: E402
from pycheck import main, test  # noqa: E402



def random_case(rng):
    n_jobs = rng.randint(0, 60)
    pool = [f"job{k:03d}" for k in range(80)] + ["fuzz_a", "sanitize_b", "x_test", "y_replay"]
    jobs = [rng.choice(pool) for _ in range(n_jobs)]  # duplicates on purpose
    durations = {}
    for j in set(jobs):
        r = rng.random()
        if r < 0.3:
            continue  # unrecorded: the median
        durations[j] = rng.choice([0, 1, 1, 2, 5, 5, 30, 79, rng.uniform(0, 100)])
    return jobs, durations, rng.randint(1, 8)


@test
def coverage_and_determinism():
    """500 random job lists, N in 1..8: every job in exactly one shard, the union is the list,
    the same split for the same input in any order."""
    rng = random.Random(20261130)
    for _ in range(500):
        jobs, durations, n = random_case(rng)
        shards, loads, cost = shard.plan(jobs, n, durations)
        assert len(shards) == n
        flat = [j for s in shards for j in s]
        assert sorted(flat) == sorted(set(jobs)), (jobs, shards)
        assert len(flat) == len(set(flat))
        shuffled = list(jobs)
        rng.shuffle(shuffled)
        assert shard.plan(shuffled, n, dict(reversed(list(durations.items()))))[0] == shards
        assert shard.plan(jobs, n, durations)[0] == shards


@test
def lpt_balance_bound():
    """max shard load <= total / N + the longest job (the greedy LPT bound)."""
    rng = random.Random(7)
    for _ in range(500):
        jobs, durations, n = random_case(rng)
        shards, loads, cost = shard.plan(jobs, n, durations)
        if not cost:
            continue
        total = sum(cost.values())
        assert max(loads) <= total / n + max(cost.values()) + 1e-9, (loads, total, n)
        for s, load in zip(shards, loads):
            assert abs(sum(cost[j] for j in s) - load) < 1e-6


@test
def lpt_known_split_and_ties_by_name():
    shards, loads, _ = shard.plan(["a", "b", "c", "d", "e"], 2,
                                  {"a": 7, "b": 6, "c": 5, "d": 4, "e": 3})
    assert shards == [["a", "d", "e"], ["b", "c"]], shards
    assert loads == [14, 11]
    # Equal durations: by name, round robin from the lowest shard index.
    shards, _, _ = shard.plan(["d", "b", "a", "c", "e"], 3, {})
    assert shards == [["a", "d"], ["b", "e"], ["c"]], shards
    # More shards than jobs: the extra shards are empty.
    shards, loads, _ = shard.plan(["x"], 4, {"x": 3})
    assert shards == [["x"], [], [], []] and loads == [3, 0, 0, 0]


@test
def unrecorded_jobs_get_the_median_and_overrides_win():
    _, _, cost = shard.plan(["a", "b", "c", "new"], 2, {"a": 1, "b": 10, "c": 4, "other": 99})
    assert cost["new"] == 4, cost
    _, _, cost = shard.plan(["a", "b"], 2, {})
    assert cost == {"a": 1.0, "b": 1.0}, cost
    _, _, cost = shard.plan(["fuzz_x", "fuzz_y", "t"], 2, {"fuzz_x": 60, "t": 5},
                            shard.parse_overrides(["fuzz_*=120"]))
    assert cost == {"fuzz_x": 120, "fuzz_y": 120, "t": 5}, cost


@test
def durations_file_forms():
    with tempfile.TemporaryDirectory() as d:
        plain, summ = os.path.join(d, "p.json"), os.path.join(d, "s.json")
        json.dump({"a": 3, "b": 2.5, "note": "text", "flag": True}, open(plain, "w"))
        json.dump({"tier": "gpu", "durations": {"a": 4}, "totals": {"passed": 1}},
                  open(summ, "w"))
        assert shard.load_durations(plain) == {"a": 3.0, "b": 2.5}
        assert shard.load_durations(summ) == {"a": 4.0}
        committed = shard.load_durations(os.path.join(HERE, "shard_durations.json"))
        assert committed["dense_gpu_goldens_test"] == 79 and len(committed) >= 8, committed


def run_cli(*args):
    return subprocess.run([sys.executable, os.path.join(HERE, "shard.py")] + list(args),
                          capture_output=True, text=True, timeout=60)


@test
def cli_plan_matches_the_library_on_every_shard():
    rng = random.Random(3)
    with tempfile.TemporaryDirectory() as d:
        for case in range(4):
            jobs, durations, n = random_case(rng)
            jobs += ["always_there"]
            dfile, jfile = os.path.join(d, "d.json"), os.path.join(d, "jobs.txt")
            json.dump(durations, open(dfile, "w"))
            open(jfile, "w").write("\n".join(jobs) + "\n")
            want = shard.plan(jobs, n, durations)[0]
            got = []
            for i in range(n):
                r = run_cli("plan", "--shard", f"{i}/{n}", "--durations", dfile,
                            "--jobs-file", jfile)
                assert r.returncode == 0, r.stderr
                got.append(r.stdout.split())
            assert got == want, (got, want)
    assert run_cli("plan", "--shard", "3/3", "a").returncode == 2
    assert run_cli("plan", "--shard", "x", "a").returncode == 2


def junit(path, suite, cases):
    """cases: [(name, 'passed' | 'failed' | 'skipped')] as a junit_step-like report."""
    root = ET.Element("testsuites")
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)))
    for name, st in cases:
        tc = ET.SubElement(ts, "testcase", classname=suite, name=name)
        if st == "failed":
            ET.SubElement(tc, "failure", message="boom")
        elif st == "skipped":
            ET.SubElement(tc, "skipped", message="no device")
    ET.ElementTree(root).write(path)


def make_shard(d, spec, reports, where=None, finished=True):
    """A shard out dir as run-gpu-tier.sh --shard leaves it."""
    os.makedirs(os.path.join(d, "xml"), exist_ok=True)
    with open(os.path.join(d, "shard.txt"), "w") as f:
        f.write(f"{spec} host{spec[0]}\n")
    for suite, cases in reports.items():
        junit(os.path.join(d, "xml", f"{suite}.xml"), suite, cases)
    if finished:
        with open(os.path.join(d, "placement.tsv"), "w") as f:
            for job, gpu in (where or {}).items():
                f.write(f"{job}\t{gpu}\t0\thost{spec[0]}\t{len(job)}\t0\n")
        with contextlib.redirect_stdout(io.StringIO()):
            w, dur = summarize.read_placement(os.path.join(d, "placement.tsv"))
            summarize.summarize(summarize.collect(
                [os.path.join(d, "xml", x) for x in os.listdir(os.path.join(d, "xml"))]),
                d, tier="gpu", notes=["GPU tier: fake"],
                extra={"where": w, "durations": dur, "shard": spec})


def three_shards(root, fail_in_1=None, finished_1=True):
    dirs = [os.path.join(root, f"s{i}") for i in range(3)]
    make_shard(dirs[0], "0/3", {"a_test": [("one", "passed"), ("two", "skipped")],
                                "x_replay": [("x_replay", "passed")]},
               {"a_test": 0, "x_replay": 0})
    b = [("one", "passed"), ("two", "passed")] + ([(fail_in_1, "failed")] if fail_in_1 else [])
    make_shard(dirs[1], "1/3", {"b_test": b}, {"b_test": "GPU-x"}, finished=finished_1)
    make_shard(dirs[2], "2/3", {"fuzz_c": [("fuzz_c", "passed")]}, {"fuzz_c": 0})
    return dirs


def merge(dirs, out, ledger=None, expect=3):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = shard.merge(dirs, out, ledger, "gpu", expect)
    return rc, buf.getvalue()


@test
def merge_adds_up_and_keeps_provenance():
    with tempfile.TemporaryDirectory() as root:
        dirs = three_shards(root)
        out = os.path.join(root, "merged")
        rc, text = merge(dirs, out)
        assert rc == 0, text
        assert text.rstrip().splitlines()[-1] == "5 passed, 0 failed, 1 skipped", text
        s = json.load(open(os.path.join(out, "summary-gpu.json")))
        parts = [json.load(open(os.path.join(d, "summary-gpu.json")))["totals"] for d in dirs]
        for k in ("passed", "failed", "skipped"):
            assert s["totals"][k] == sum(p[k] for p in parts), (s["totals"], parts)
        assert [x["shard"] for x in s["shards"]] == ["0/3", "1/3", "2/3"]
        assert [x["host"] for x in s["shards"]] == ["host0", "host1", "host2"]
        assert s["where"] == {"a_test": 0, "x_replay": 0, "b_test": "GPU-x", "fuzz_c": 0}, s
        assert s["shard_of"]["b_test"] == "1/3" and s["shard_of"]["fuzz_c"] == "2/3"
        assert s["durations"]["fuzz_c"] == 6
        assert open(os.path.join(out, "result-gpu.txt")).read() == "5 passed, 0 failed, 1 skipped\n"
        j = ET.parse(os.path.join(out, "junit-gpu.xml")).getroot()
        props = {ts.get("name"): {p.get("name"): p.get("value") for p in ts.iter("property")}
                 for ts in j.iter("testsuite")}
        assert props["b_test"] == {"gpu": "GPU-x", "shard": "1/3"}, props
        assert sum(1 for _ in j.iter("testcase")) == 6


@test
def a_failure_in_one_shard_fails_the_merge_a_known_one_does_not():
    with tempfile.TemporaryDirectory() as root:
        dirs = three_shards(root, fail_in_1="broken")
        rc, text = merge(dirs, os.path.join(root, "m1"))
        assert rc == 1, text
        assert text.rstrip().splitlines()[-1] == "5 passed, 1 failed, 1 skipped", text
        assert "b_test: b_test/broken" in text, text
        ledger = os.path.join(root, "known_failures.txt")
        open(ledger, "w").write("# ledger\nb_test/b_test/broken  #42  flaky on shard hosts\n")
        rc, text = merge(dirs, os.path.join(root, "m2"), ledger)
        assert rc == 0, text
        s = json.load(open(os.path.join(root, "m2", "summary-gpu.json")))
        assert s["failed"][0]["known"] == "#42 flaky on shard hosts", s["failed"]


@test
def a_shard_that_did_not_finish_or_is_missing_fails_the_merge():
    with tempfile.TemporaryDirectory() as root:
        dirs = three_shards(root, finished_1=False)
        rc, text = merge(dirs, os.path.join(root, "m1"))
        assert rc == 1 and "did not finish" in text, text
        dirs = three_shards(os.path.join(root, "again"))
        rc, text = merge([dirs[0], dirs[2]], os.path.join(root, "m2"))
        assert rc == 1 and "no results for shard 1/3" in text, text
        rc, text = merge([dirs[0], dirs[2], os.path.join(root, "nowhere")],
                         os.path.join(root, "m3"))
        assert rc == 1, text
        rc, text = merge([dirs[0], dirs[1], dirs[1], dirs[2]], os.path.join(root, "m4"))
        assert rc == 1 and "given twice" in text, text


@test
def merge_cli_exit_status():
    with tempfile.TemporaryDirectory() as root:
        dirs = three_shards(root, fail_in_1="broken")
        r = run_cli("merge", "--out", os.path.join(root, "m"), "--expect", "3", *dirs)
        assert r.returncode == 1, r.stdout + r.stderr
        assert r.stdout.rstrip().splitlines()[-1] == "5 passed, 1 failed, 1 skipped"
        dirs = three_shards(os.path.join(root, "ok"))
        r = run_cli("merge", "--out", os.path.join(root, "m2"), "--expect", "3", *dirs)
        assert r.returncode == 0, r.stdout + r.stderr


@test
def summarize_cli_where_map_and_compatibility():
    with tempfile.TemporaryDirectory() as d:
        junit(os.path.join(d, "fuzz_x.xml"), "fuzz_x", [("fuzz_x", "passed")])
        open(os.path.join(d, "placement.tsv"), "w").write(
            "fuzz_x\t3\t1\thostA\t61\t0\nbench\tGPU-7\t0\thostA\t5\t0\n")
        cmd = [sys.executable, os.path.join(HERE, "summarize.py"), "--tier", "gpu"]
        r = subprocess.run(cmd + ["--out", os.path.join(d, "o1"), "--placement",
                                  os.path.join(d, "placement.tsv"), "--shard", "0/2",
                                  os.path.join(d, "fuzz_x.xml")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        s = json.load(open(os.path.join(d, "o1", "summary-gpu.json")))
        assert s["where"] == {"fuzz_x": 3, "bench": "GPU-7"} and s["shard"] == "0/2", s
        assert s["durations"] == {"fuzz_x": 61.0, "bench": 5.0}
        j = ET.parse(os.path.join(d, "o1", "junit-gpu.xml")).getroot()
        assert [p.get("value") for p in j.iter("property")] == ["3"]
        r = subprocess.run(cmd + ["--out", os.path.join(d, "o2"), os.path.join(d, "fuzz_x.xml")],
                           capture_output=True, text=True)
        s = json.load(open(os.path.join(d, "o2", "summary-gpu.json")))
        assert r.returncode == 0 and "where" not in s and s["totals"]["passed"] == 1, s


@test
def a_skipped_case_counts_skipped_never_passed():
    """tools/testlib.sh's finish (what slurm_test.sh writes when Slurm cannot start)."""
    with tempfile.TemporaryDirectory() as d:
        xml = os.path.join(d, "test.xml")
        script = (f"source {HERE}/testlib.sh; check 'a check' 0; "
                  "skip_case 'single-node Slurm' 'slurmctld: not installed'; finish")
        r = subprocess.run(["bash", "-c", script], env=dict(os.environ, XML_OUTPUT_FILE=xml),
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        cases = summarize.read_cases(xml)
        assert [c[1] for c in cases] == ["passed", "skipped"], cases
        assert cases[1][2] == "slurmctld: not installed", cases



if __name__ == "__main__":
    sys.exit(main("shard_test"))
