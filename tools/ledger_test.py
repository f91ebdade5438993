#!/usr/bin/env python3
"""tools/ledger.py (record / append / report) on synthetic out dirs, and run-gpu-tier.sh
--nightly end to end on a fake bundle (fake Criterion binaries, fuzzers, benchmark,
compute-sanitizer and ncu; the technique of tools/gpu_dispatch_test.sh):
  - a new failure exits 1 and is named; a fixed one is listed; a known one (the ledger file) is
    not new; a failure still failing since the previous record still exits 1;
  - a fuzz reproducer comes with its target and replay command (FUZZ_ASSERT's repro-<t>-<h>.bin
    and a libFuzzer crash- artifact named by the fuzz log);
  - a kernel slower beyond its measured noise exits 2 and is named; one slower within noise or
    under 5 % exits 0; no bench JSON: the record says so;
  - a corrupt or missing record / history / ledger file exits 3; a first record is no problem;
  - append adds one JSON line per record; the record reads the fuzz summary lines, the
    sanitizer report (recorded H200 output, tools/testdata/sanitize/), placement.tsv;
  - --nightly: the sections run in the plan's order with a progress line each, fuzzing gets
    the rest of the budget (or is skipped with a note), the history grows by one record a
    night, and the exit status is the report's (0, 1 for a new failure, 2 for a slower kernel);
    without --nightly the order is today's (sanitizer, fuzzers, benchmarks).
Writes each check as a JUnit case to $XML_OUTPUT_FILE; exits 1 when one fails."""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LEDGER = os.path.join(HERE, "ledger.py")
sys.path.insert(0, HERE)
from pycheck import main, test  # noqa: E402


def ledger(*args):
    r = subprocess.run([sys.executable, LEDGER, *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def write(path, text, mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    if mode:
        os.chmod(path, mode)


def synth_out(root, cases, known=None, fuzz=None, repros=None, bench=None, sanitize=False,
              logs=None):
    """An out dir as run-gpu-tier.sh leaves it. cases: {suite: {case: passed|failed|skipped}};
    fuzz: {target: summary line tail}; repros: {file name: bytes}; bench: list or None."""
    os.makedirs(root)
    for suite, cs in cases.items():
        body = "".join(
            f'<testcase name="{c}" status="{st.upper()}">'
            + ("<failure message=\"boom\"/>" if st == "failed" else
               "<skipped/>" if st == "skipped" else "") + "</testcase>"
            for c, st in cs.items())
        write(f"{root}/xml/{suite}.xml", f'<?xml version="1.0"?><testsuites><testsuite '
              f'name="{suite}" tests="{len(cs)}">{body}</testsuite></testsuites>')
    for target, tail in (fuzz or {}).items():
        write(f"{root}/logs/fuzz_{target}.summary", f"{'fuzz_' + target:<48} {tail}\n")
    for name, data in (repros or {}).items():
        write(f"{root}/repro/{name}", data)
    for name, text in (logs or {}).items():
        write(f"{root}/logs/{name}", text)
    if bench is not None:
        write(f"{root}/bench-dense.json", json.dumps(bench))
    if sanitize:
        data = os.path.join(HERE, "testdata", "sanitize")
        subprocess.run([sys.executable, os.path.join(HERE, "sanitize_report.py"), "--set",
                        f"{data}/set.tsv", "--census", f"{data}/census", "--xml", f"{data}/xml",
                        "--logs", f"{data}/logs", "--wall", "210", "--timeout", "160",
                        "--out", root], check=True,
                       stdout=subprocess.DEVNULL)
    write(f"{root}/placement.tsv", "a_test\t0\t0\thost\t3\t0\n")
    kf = []
    if known:
        write(f"{root}/known.txt", "".join(f"{k}  #9  known for the test\n" for k in known))
        kf = ["--known-failures", f"{root}/known.txt"]
    subprocess.run([sys.executable, os.path.join(HERE, "summarize.py"), "--out", root, "--tier",
                    "gpu", *kf, *sorted(f"{root}/xml/{s}.xml" for s in cases)],
                   stdout=subprocess.DEVNULL)
    return root


OK_FUZZ = ("ok (16 workers: 77602 executions in 17.3 s = 4484 exec/s; cov 226 ft 429; "
           "corpus 95 -> 348 files)")


def night(tmp, name, hist, commit, **kw):
    """Record an out dir and append it to the history; returns the record."""
    out = synth_out(os.path.join(tmp, name), **kw)
    rc, _, err = ledger("record", out, "--commit", commit, "--gpu", "NVIDIA H200", "--budget-min",
                        "20", "-o", f"{out}.json")
    assert rc == 0, err
    rc, _, err = ledger("append", hist, f"{out}.json")
    assert rc == 0, err
    with open(f"{out}.json") as f:
        return json.load(f)


def section(md, title):
    """The lines of markdown section TITLE (up to the next heading)."""
    m = re.search(r"^#+ " + re.escape(title) + r".*?$(.*?)(?=^#|\Z)", md, re.S | re.M)
    assert m, f"no section {title!r} in:\n{md}"
    return m.group(1)


BASE = {"a_test": {"one": "passed", "two": "passed"}, "b_test": {"x": "passed", "y": "failed"}}


@test
def new_failure_exits_1_and_is_named():
    with tempfile.TemporaryDirectory() as t:
        h = f"{t}/h.jsonl"
        night(t, "n1", h, "aaaa", cases=BASE)
        night(t, "n2", h, "bbbb", cases={"a_test": {"one": "failed", "two": "passed"},
                                          "b_test": {"x": "passed", "y": "failed"}})
        rc, md, err = ledger("report", h, "--md", f"{t}/r.md")
        assert rc == 1, (rc, md, err)
        new = section(md, "New failures")
        assert "a_test/one" in new and "b_test/y" not in new, new
        assert "b_test/y" in section(md, "Still failing"), md
        assert open(f"{t}/r.md").read() == md


@test
def fixed_failure_is_listed():
    with tempfile.TemporaryDirectory() as t:
        h = f"{t}/h.jsonl"
        night(t, "n1", h, "aaaa", cases=BASE)
        night(t, "n2", h, "bbbb", cases={"a_test": {"one": "passed", "two": "passed"},
                                          "b_test": {"x": "passed", "y": "passed"}})
        rc, md, _ = ledger("report", h)
        assert rc == 0, (rc, md)
        assert "b_test/y" in section(md, "Fixed"), md
        assert "none" in section(md, "New failures"), md


@test
def known_failure_is_not_new():
    with tempfile.TemporaryDirectory() as t:
        h = f"{t}/h.jsonl"
        night(t, "n1", h, "aaaa", cases={"a_test": {"one": "passed"}})
        night(t, "n2", h, "bbbb", cases=BASE)
        write(f"{t}/kf.txt", "# the ledger\nb_test/y  #42  waits for the new walk\n")
        rc, md, _ = ledger("report", h, "--known-failures", f"{t}/kf.txt")
        assert rc == 0, (rc, md)
        assert "b_test/y" in section(md, "Known failures") and "#42" in md, md
        assert "b_test/y" not in section(md, "New failures"), md
        # Without the ledger file the same failure is new: the check can fail.
        rc, md, _ = ledger("report", h)
        assert rc == 1 and "b_test/y" in section(md, "New failures"), (rc, md)
        # The record's own verdict (summarize.py's ledger at run time) counts when no file given.
        h2 = f"{t}/h2.jsonl"
        night(t, "n3", h2, "cccc", cases=BASE, known=["b_test/y"])
        rc, md, _ = ledger("report", h2)
        assert rc == 0 and "first record" in md, (rc, md)


@test
def fuzz_reproducers_come_with_replay_commands():
    with tempfile.TemporaryDirectory() as t:
        h = f"{t}/h.jsonl"
        night(t, "n1", h, "aaaa", cases=BASE, fuzz={"split_invariance": OK_FUZZ})
        log = ("---- fuzz-3.log\n==12==ERROR: AddressSanitizer: heap-buffer-overflow\n"
               f"artifact_prefix='{t}/n2/repro/'; Test unit written to {t}/n2/repro/crash-0a1b\n")
        rec = night(t, "n2", h, "bbbb", cases=BASE, fuzz={
            "split_invariance": OK_FUZZ,
            "ring_residency": "FAILED (exit 1) (16 workers: 1000 executions in 10.0 s = 100 "
                              "exec/s; cov 50 ft 60; corpus 10 -> 12 files)"},
            repros={"repro-split_invariance-00ff12.bin": "x", "crash-0a1b": "yy"},
            logs={"fuzz_ring_residency.log": log})
        z = rec["fuzz"]["split_invariance"]
        assert (z["executions"], z["exec_per_s"], z["cov"], z["ft"], z["new_corpus_files"],
                z["workers"], z["seconds"]) == (77602, 4484, 226, 429, 253, 16, 17.3), z
        assert z["reproducers"] == [f"{t}/n2/repro/repro-split_invariance-00ff12.bin"], z
        assert rec["fuzz"]["ring_residency"]["status"] == "FAILED (exit 1)"
        rc, md, _ = ledger("report", h)
        assert rc == 1, (rc, md)
        f = section(md, "Fuzz findings")
        asan = "ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0"
        assert (f"{asan} bin/split_invariance_fuzzer {t}/n2/repro/repro-split_invariance-00ff12"
                ".bin") in f, f
        assert f"{asan} bin/ring_residency_fuzzer {t}/n2/repro/crash-0a1b" in f, f
        # With the bundle dir known, the path is relative to it (replayed from the bundle dir).
        rc, _, err = ledger("record", f"{t}/n2", "--commit", "c", "--gpu", "g", "--bundle", t,
                            "-o", f"{t}/r.json")
        rr = json.load(open(f"{t}/r.json"))["reproducers"]
        assert rc == 0 and rr[0]["replay"] == f"{asan} bin/ring_residency_fuzzer n2/repro/" \
            "crash-0a1b", (err, rr)


@test
def test_reproducers_are_not_fuzz_findings():
    """A test's reproducer (repro-<suite>-<test>-<tensor>.safetensors, tests/lib/testbed.c) is
    listed as such; the failing test carries the verdict, so a passing night that left one
    (the H200 nightly of 2026-12-01 had four, from negative controls) stays clean."""
    with tempfile.TemporaryDirectory() as t:
        h = f"{t}/h.jsonl"
        name = "repro-decode_split_gpu-negative_control-q_lat_perturbed.safetensors"
        rec = night(t, "n1", h, "aaaa", cases=BASE, known=["b_test/y"],
                    fuzz={"split_invariance": OK_FUZZ}, repros={name: "xyz"})
        assert rec["reproducers"] == [] and rec["fuzz"]["split_invariance"]["reproducers"] == []
        assert [r["file"] for r in rec["test_reproducers"]] == [name], rec["test_reproducers"]
        rc, md, _ = ledger("report", h, "--known-failures", f"{t}/n1/known.txt")
        assert rc == 0, (rc, md)
        assert "none" in section(md, "Fuzz findings"), md
        assert name in section(md, "Test reproducers"), md


@test
def a_sampled_mutate_pass_is_recorded_and_reported():
    """OUT/mutate/mutation-report.json (tools/mutate.py run) goes into the record as the night's
    mutation score, with its survivors; the report shows it against last night's."""
    with tempfile.TemporaryDirectory() as t:
        h = f"{t}/h.jsonl"
        rows = [dict(id=str(i), file="kernels/k.cu", line=i, kernel="f", operator="REL",
                     before=f"x{i}", after="y", status=st)
                for i, st in enumerate(["killed", "killed", "killed (timeout)", "survived",
                                        "did not compile"])]
        night(t, "n1", h, "aaaa", cases=BASE, known=["b_test/y"],
              logs={"../mutate/mutation-report.json": json.dumps(
                  {"meta": "5 mutants (sampled: 5 with seed 1)", "results": rows[:3]})})
        rec = night(t, "n2", h, "bbbb", cases=BASE, known=["b_test/y"],
                    logs={"../mutate/mutation-report.json": json.dumps(
                        {"meta": "5 mutants (sampled: 5 with seed 1)", "results": rows})})
        mu = rec["mutation"]
        assert (mu["mutants"], mu["killed"], mu["survived"], mu["no_compile"]) == (5, 3, 1, 1), mu
        assert mu["score"] == 0.75 and mu["survivors"] == ["kernels/k.cu:3 REL: x3"], mu
        rc, md, _ = ledger("report", h, "--known-failures", f"{t}/n2/known.txt")
        sec = section(md, "Mutation (sampled)")
        assert "score 75.0% (last night 100.0%)" in sec and "kernels/k.cu:3 REL: x3" in sec, sec
        assert "5 mutants (sampled: 5 with seed 1): 3 killed" in sec, sec  # the meta once
        assert rc == 0, (rc, md)  # the score is reported, it does not fail the night


BENCH1 = [{"kernel": "attn_absorbed", "shape": "glm5_decode", "arm": "plain", "median_us": 100.0,
           "p10_us": 99.0, "p90_us": 101.0},
          {"kernel": "kpool_score", "shape": "glm5_decode", "arm": "plain", "median_us": 50.0,
           "p10_us": 48.0, "p90_us": 52.0}]


def bench2(attn_us, attn_spread_us, score_us):
    return [dict(BENCH1[0], median_us=attn_us, p10_us=attn_us - attn_spread_us / 2,
                 p90_us=attn_us + attn_spread_us / 2), dict(BENCH1[1], median_us=score_us)]


@test
def the_html_page_has_every_section_and_a_plot_per_kernel():
    """report --html: one self-contained page (no external reference), the verdict, the tables,
    a slower kernel marked, and one SVG plot per benchmark row with a point per recorded night."""
    from html.parser import HTMLParser

    class Page(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.h2, self.stack, self.circles, self.refs = [], [], [], [], []

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            self.tags.append((tag, a))
            self.stack.append(tag)
            self.refs += [v for k, v in attrs if k in ("src", "href") and v]
            if tag == "circle":
                self.circles.append(a)

        def handle_endtag(self, tag):
            if self.stack and self.stack[-1] == tag:
                self.stack.pop()

        def handle_data(self, data):
            if self.stack and self.stack[-1] == "h2":
                self.h2.append(data.strip())

    with tempfile.TemporaryDirectory() as t:
        h = f"{t}/h.jsonl"
        night(t, "n1", h, "aaaa", cases=BASE, bench=BENCH1, known=["b_test/y"],
              fuzz={"split_invariance": OK_FUZZ}, sanitize=True)
        night(t, "n2", h, "bbbb", cases=BASE, bench=bench2(101.0, 2.0, 50.0), known=["b_test/y"])
        night(t, "n3", h, "cccc", cases=BASE, bench=bench2(130.0, 2.0, 50.5), known=["b_test/y"],
              fuzz={"split_invariance": OK_FUZZ}, sanitize=True)
        rc, md, err = ledger("report", h, "--html", f"{t}/r.html", "--md", f"{t}/r.md")
        assert rc == 1, (rc, md, err)  # the sanitizer test data has a TIMEOUT step
        page = open(f"{t}/r.html").read()
        p = Page()
        p.feed(page)
        for sec in ("Suites", "Fuzzing", "Sanitizer", "Benchmarks",
                    "Each kernel over the recorded nights", "The report in full (markdown)"):
            assert any(x.startswith(sec) for x in p.h2), (sec, p.h2)
        assert p.refs == [] and "<script" not in page, p.refs  # self-contained
        assert "verdict v1" in page and "FAILED" in page and "TIMEOUT" in page
        svgs = [a for tag, a in p.tags if tag == "svg"]
        assert len(svgs) == 2, svgs  # one plot per benchmark row
        # three nights per kernel: 3 circles each, tonight's (the last) in red
        assert len(p.circles) == 6 and p.circles[2]["fill"] == "#d0452f", p.circles
        assert "<tr class=\"slow\"><td>attn_absorbed/glm5_decode/plain</td>" in page, page
        assert "ERROR SUMMARY" in page or "ok" in page
        assert open(f"{t}/r.md").read() in page.replace("&#x27;", "'").replace(
            "&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


@test
def slower_kernel_beyond_noise_exits_2_and_is_named():
    with tempfile.TemporaryDirectory() as t:
        h = f"{t}/h.jsonl"
        night(t, "n1", h, "aaaa", cases=BASE, bench=BENCH1)
        # attn +20 % with a 2 % spread (threshold max(6 %, 5 %)); score +4 %: within 5 %.
        night(t, "n2", h, "bbbb", cases=BASE, bench=bench2(120.0, 2.4, 52.0), known=["b_test/y"])
        rc, md, _ = ledger("report", h)
        assert rc == 2, (rc, md)
        slow = section(md, "Slower beyond noise")
        assert "attn_absorbed/glm5_decode/plain" in slow and "kpool_score" not in slow, slow
        # A new failure outranks the regression: exit 1.
        night(t, "n3", h, "cccc", cases={"a_test": {"one": "failed"}, "b_test": {"y": "failed"}},
              bench=bench2(150.0, 1.0, 50.0), known=["b_test/y"])
        rc, md, _ = ledger("report", h)
        assert rc == 1 and "attn_absorbed" in section(md, "Slower beyond noise"), (rc, md)


@test
def slower_kernel_within_noise_exits_0():
    with tempfile.TemporaryDirectory() as t:
        h = f"{t}/h.jsonl"
        night(t, "n1", h, "aaaa", cases=BASE, bench=BENCH1, known=["b_test/y"])
        # attn +20 % but its own spread is 10 % of the median: threshold 30 %.
        night(t, "n2", h, "bbbb", cases=BASE, bench=bench2(120.0, 12.0, 51.0), known=["b_test/y"])
        rc, md, _ = ledger("report", h)
        assert rc == 0, (rc, md)
        assert "none" in section(md, "Slower beyond noise") and "2 kernels within noise" in md, md


@test
def no_bench_json_is_said_in_the_record():
    with tempfile.TemporaryDirectory() as t:
        rec = night(t, "n1", f"{t}/h.jsonl", "aaaa", cases=BASE)
        assert rec["bench"] is None and "no bench-*.json" in rec["bench_note"], rec
        rc, md, _ = ledger("report", f"{t}/h.jsonl")
        assert "no bench-*.json" in section(md, "Benchmarks"), md


@test
def corrupt_or_missing_inputs_exit_3():
    with tempfile.TemporaryDirectory() as t:
        h = f"{t}/h.jsonl"
        night(t, "n1", h, "aaaa", cases=BASE)
        with open(h, "a") as f:
            f.write('{"ledger_version": 1, "commit": "bbbb", "suites": {"a_te\n')
        rc, _, err = ledger("report", h, "--md", f"{t}/r.md")
        assert rc == 3 and "corrupt" in err, (rc, err)
        assert "infrastructure problem" in open(f"{t}/r.md").read()
        write(f"{t}/h2.jsonl", '{"commit": "x"}\n')  # JSON, but not a record
        assert ledger("report", f"{t}/h2.jsonl")[0] == 3
        assert ledger("report", f"{t}/none.jsonl")[0] == 3  # no history
        write(f"{t}/h3.jsonl", "\n")
        assert ledger("report", f"{t}/h3.jsonl")[0] == 3  # an empty history
        write(f"{t}/bad.txt", "b_test/y  waits (no issue)\n")
        assert ledger("report", h.replace("h.jsonl", "n1.json"))[0] == 3  # not JSONL history
        h4 = f"{t}/h4.jsonl"
        night(t, "n4", h4, "dddd", cases=BASE)
        assert ledger("report", h4, "--known-failures", f"{t}/bad.txt")[0] == 3
        assert ledger("report", h4, "--known-failures", f"{t}/missing.txt")[0] == 3
        # record: an out dir without any test report; a garbled fuzz summary; bad bench JSON.
        os.makedirs(f"{t}/empty")
        assert ledger("record", f"{t}/empty", "--commit", "c", "--gpu", "g", "-o",
                      f"{t}/e.json")[0] == 3
        out = synth_out(f"{t}/n5", cases=BASE, fuzz={"x": "ok (garbled"})
        assert ledger("record", out, "--commit", "c", "--gpu", "g", "-o", f"{t}/e.json")[0] == 3
        out = synth_out(f"{t}/n6", cases=BASE, bench=[{"kernel": "k"}])
        assert ledger("record", out, "--commit", "c", "--gpu", "g", "-o", f"{t}/e.json")[0] == 3
        write(f"{t}/notrec.json", "[1, 2]")
        assert ledger("append", f"{t}/h5.jsonl", f"{t}/notrec.json")[0] == 3
        assert not os.path.exists(f"{t}/h5.jsonl")
        # a corrupt line older than the last two is left out of the page's plots, not fatal
        h6 = f"{t}/h6.jsonl"
        write(h6, "{not json\n")
        night(t, "n7", h6, "eeee", cases=BASE, known=["b_test/y"])
        night(t, "n8", h6, "ffff", cases=BASE, known=["b_test/y"])
        rc, md, err = ledger("report", h6, "--known-failures", f"{t}/n8/known.txt", "--html",
                             f"{t}/p.html")
        assert rc == 0 and "Against the previous record: eeee" in md, (rc, md, err)
        assert "1 older history line(s) could not be read" in open(f"{t}/p.html").read()


@test
def first_record_is_judged_alone():
    with tempfile.TemporaryDirectory() as t:
        night(t, "n1", f"{t}/h.jsonl", "aaaa", cases=BASE)
        rc, md, _ = ledger("report", f"{t}/h.jsonl")
        assert rc == 1 and "first record" in md and "b_test/y" in md, (rc, md)
        night(t, "n2", f"{t}/h2.jsonl", "aaaa", cases={"a_test": {"one": "passed"}})
        rc, md, _ = ledger("report", f"{t}/h2.jsonl")
        assert rc == 0 and "first record" in md, (rc, md)


@test
def history_appends_one_line_per_record():
    with tempfile.TemporaryDirectory() as t:
        h = f"{t}/sub/h.jsonl"
        r1 = night(t, "n1", h, "aaaa", cases=BASE)
        r2 = night(t, "n2", h, "bbbb", cases=BASE, bench=BENCH1)
        lines = open(h).read().splitlines()
        assert len(lines) == 2, lines
        assert [json.loads(l) for l in lines] == [r1, r2]
        assert r1["commit"] == "aaaa" and r2["gpu"] == "NVIDIA H200" and r2["budget_min"] == 20
        assert r1["totals"] == {"passed": 3, "failed": 1, "skipped": 0}, r1["totals"]
        assert r1["suites"]["b_test"] == {"passed": 1, "failed": 1, "skipped": 0}
        assert [f["id"] for f in r1["failures"]] == ["b_test/y"]
        assert r1["jobs"]["a_test"] == {"gpu": "0", "seconds": 3.0, "exit": 0}


@test
def sanitizer_results_and_regressions():
    with tempfile.TemporaryDirectory() as t:
        h = f"{t}/h.jsonl"
        prev = night(t, "n1", h, "aaaa", cases=BASE, known=["b_test/y"])
        rec = night(t, "n2", h, "bbbb", cases=BASE, sanitize=True, known=["b_test/y"])
        assert prev["sanitizer"] is None
        s = {x["step"]: x for x in rec["sanitizer"]["steps"]}
        assert rec["sanitizer"]["wall_seconds"] == 210 and len(s) == 8, rec["sanitizer"]
        to = [k for k, v in s.items() if v["verdict"] == "TIMEOUT"]
        assert to == ["sanitize_racecheck_kpool_gpu_goldens_test"], to
        assert all(isinstance(v["seconds"], int) for v in s.values()), s
        rc, md, _ = ledger("report", h)
        reg = section(md, "Sanitizer")
        assert rc == 1 and "sanitize_racecheck_kpool_gpu_goldens_test`: TIMEOUT" in reg, (rc, md)
        # dense's racecheck passed in 131 of 160 s: named as near its timeout, a warning only
        assert rec["sanitizer"]["near_timeout"] == ["sanitize_racecheck_dense_gpu_goldens_test"]
        assert ("near their timeout (160.0 s): `sanitize_racecheck_dense_gpu_goldens_test`"
                in reg), reg
        # Listed in the known-failure ledger, the timed-out step no longer fails the night.
        kid = "sanitize_racecheck_kpool_gpu_goldens_test/x/y"
        write(f"{t}/kf.txt", f"b_test/y  #1  old\n{kid}  #7  racecheck is slow there\n")
        rc, md, _ = ledger("report", h, "--known-failures", f"{t}/kf.txt")
        assert rc == 0 and "[known]" in section(md, "Sanitizer"), (rc, md)


# ---- run-gpu-tier.sh --nightly on a fake bundle ----------------------------------------------
FAKE_CRITERION = r"""#!/usr/bin/env bash
n=$(basename "$0")
echo "test $n" >> "$FAKE_ORDER"
{
    echo '<?xml version="1.0" encoding="UTF-8"?><testsuites name="Criterion Tests">'
    echo "<testsuite name=\"${n%_test}\" tests=\"2\"><testcase name=\"one\" status=\"PASSED\"/>"
    if [ "${FAKE_FAIL:-}" = "$n" ]; then
        echo '<testcase name="broken" status="FAILED"><failure message="boom"/></testcase>'
    else
        echo '<testcase name="broken" status="PASSED"/>'
    fi
    echo "</testsuite></testsuites>"
} > "$MLA_XML_OUTPUT"
"""
FAKE_FUZZER = r"""#!/usr/bin/env bash
t=$(basename "$0" _fuzzer) mt="" ap=""
for a in "$@"; do
    case $a in
        -runs=0) echo "replay $t" >> "$FAKE_ORDER"; exit 0 ;;
        -max_total_time=*) mt=${a#*=} ;;
        -artifact_prefix=*) ap=${a#*=} ;;
    esac
done
echo "fuzz $t $mt" >> "$FAKE_ORDER"
{ echo "stat::number_of_executed_units: 5000"; echo "#5000 DONE cov: 12 ft: 34 corp: 3"; } \
    > fuzz-0.log
touch "corpus/new-$t"
if [ "${FAKE_CRASH:-}" = "$t" ]; then
    echo crash > "${ap}crash-deadbeef"
    { echo "==1==ERROR: AddressSanitizer: boom"; echo "Test unit written to ${ap}crash-deadbeef"; } \
        >> fuzz-0.log
    exit 1
fi
"""
FAKE_BENCH = r"""#!/usr/bin/env bash
echo "bench $(basename "$0")" >> "$FAKE_ORDER"
us=${FAKE_BENCH_US:-100}
echo "[{\"kernel\": \"attn_absorbed\", \"shape\": \"glm5_decode\", \"arm\": \"plain\",
  \"median_us\": $us, \"p10_us\": $((us - 1)), \"p90_us\": $((us + 1))}]" > "$MLA_BENCH_JSON"
"""
FAKE_SANITIZER = r"""#!/usr/bin/env bash
echo "sanitize $2" >> "$FAKE_ORDER"
echo "$*" >> "$FAKE_ORDER.args"
echo "========= ERROR SUMMARY: 0 errors"
"""


def fake_bundle(t):
    b = f"{t}/bundle"
    for d in ("bin", "tools", "fuzz/corpus/xf", "fuzz/corpus/yf", "fakepath"):
        os.makedirs(f"{b}/{d}", exist_ok=True)
    shutil.copy(os.path.join(HERE, "run-gpu-tier.sh"), b)
    for f in ("gpu_dispatch.sh", "summarize.py", "sanitize_report.py", "ledger.py",
              "ledger_html.py", "shard.py", "shard_durations.json"):
        shutil.copy(os.path.join(HERE, f), f"{b}/tools/")
    x = stat.S_IRWXU
    write(f"{b}/tools/sanitize_set.tsv", "# fake\na_gpu_test\t*/san_*\n")
    write(f"{b}/COMMIT", "f00dfeed\n")
    write(f"{b}/known_failures.txt", "# none\n")
    subprocess.run(["tar", "-C", b, "-cJf", f"{b}/lib.tar.xz", "--files-from", "/dev/null"],
                   check=True)
    write(f"{b}/bin/gpu_probe", '#!/bin/sh\necho "no device: fake bundle"\nexit 1\n', x)
    for n in ("a_gpu_test", "b_test"):
        write(f"{b}/bin/{n}", FAKE_CRITERION, x)
    for n in ("xf", "yf"):
        write(f"{b}/bin/{n}_fuzzer", FAKE_FUZZER, x)
    write(f"{b}/bin/bench_dense", FAKE_BENCH, x)
    write(f"{b}/fakepath/compute-sanitizer", FAKE_SANITIZER, x)
    write(f"{b}/fakepath/ncu", "#!/bin/sh\necho census\n", x)
    write(f"{b}/fakepath/nvidia-smi", "#!/bin/sh\nexit 9\n", x)
    return b


def run_tier(b, t, *args, **env):
    order = f"{t}/order"
    if os.path.exists(order):
        os.remove(order)
    e = dict(os.environ, FAKE_ORDER=order, PATH=f"{b}/fakepath:{os.environ['PATH']}", **env)
    for k in ("CUDA_VISIBLE_DEVICES", "MLA_HISTORY", "OUT"):
        if k not in env:
            e.pop(k, None)
    r = subprocess.run([f"{b}/run-gpu-tier.sh", *args], capture_output=True, text=True, env=e,
                       timeout=120)
    seq = []
    if os.path.exists(order):
        for line in open(order):
            kind = line.split()[0]
            if not seq or seq[-1] != kind:
                seq.append(kind)
    return r.returncode, r.stdout + r.stderr, seq, open(order).read() if seq else ""


@test
def nightly_end_to_end_on_a_fake_bundle():
    with tempfile.TemporaryDirectory() as t:
        b = fake_bundle(t)
        hist = f"{b}/out/history.jsonl"
        rc, log, seq, order = run_tier(b, t, "--nightly", "--budget", "10")
        assert rc == 0, (rc, log)
        assert seq == ["test", "replay", "sanitize", "bench", "fuzz"], seq
        heads = re.findall(r"^nightly: (.+?) -- elapsed \d+:\d\d of the 10:00 budget, "
                           r"-?\d+:\d\d left", log, re.M)
        assert heads == ["tests and corpus replays", "sanitizer tier", "benchmarks", "fuzzing",
                         "summary", "ledger"], (heads, log)
        secs = [int(x) for x in re.findall(r"^fuzz \w+ (\d+)$", order, re.M)]
        assert len(secs) == 2 and all(240 <= s <= 285 for s in secs), (secs, order)
        assert "first record" in log and os.path.exists(f"{b}/out/ledger-report.md"), log
        assert "<svg" in open(f"{b}/out/ledger-report.html").read(), log  # the page, its plot
        assert len(open(hist).read().splitlines()) == 1
        rec = json.loads(open(hist).read().splitlines()[0])
        assert rec["commit"] == "f00dfeed" and rec["budget_min"] == 10, rec
        assert rec["gpu"] == "no device: fake bundle", rec["gpu"]
        assert sorted(rec["fuzz"]) == ["xf", "yf"] and rec["fuzz"]["xf"]["executions"] == 5000
        assert rec["bench"][0]["median_us"] == 100 and rec["sanitizer"]["steps"], rec
        assert [s["section"] for s in rec["sections"]] == [
            "tests and corpus replays", "sanitizer tier", "benchmarks", "fuzzing", "summary"]

        # Night 2: a new failure -> exit 1, named; the history grows.
        rc, log, _, _ = run_tier(b, t, "--nightly", "--budget", "10", FAKE_FAIL="b_test")
        assert rc == 1 and "b_test/broken" in section(log, "New failures"), (rc, log)
        assert len(open(hist).read().splitlines()) == 2
        # Night 3: fixed, but the kernel is 30 % slower -> exit 2, named.
        rc, log, _, _ = run_tier(b, t, "--nightly", "--budget", "10", FAKE_BENCH_US="130")
        assert rc == 2, (rc, log)
        assert "b_test/broken" in section(log, "Fixed"), log
        assert "attn_absorbed" in section(log, "Slower beyond noise"), log
        # Night 4: a fuzz finding -> exit 1 with its replay command. Then a 1-minute budget with
        # too little left to fuzz: skipped with a note, into another history (--history).
        rc, log, _, _ = run_tier(b, t, "--nightly", "--budget", "10", FAKE_CRASH="yf",
                                 FAKE_BENCH_US="130")
        assert rc == 1, (rc, log)
        assert ("(cd " + b + " && ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 bin/yf_fuzzer "
                "out/repro/crash-deadbeef)") in section(log, "Fuzz findings"), log
        rc, log, seq, _ = run_tier(b, t, "--nightly", "--budget", "1", "--history", f"{t}/h2.jsonl",
                                   NIGHTLY_RESERVE="45")  # 15 s left: under 10 s a target
        assert rc == 0 and "fuzz" not in seq, (rc, seq, log)
        assert re.search(r"^nightly: fuzzing -- .*\(skipped: \d+ s of the budget left", log,
                         re.M), log
        assert len(open(f"{t}/h2.jsonl").read().splitlines()) == 1
        assert len(open(hist).read().splitlines()) == 4
        # A broken ledger input -> exit 3.
        with open(f"{t}/h2.jsonl", "a") as f:
            f.write("{not json\n")
        rc, log, _, _ = run_tier(b, t, "--nightly", "--budget", "1", MLA_HISTORY=f"{t}/h2.jsonl")
        assert rc == 3, (rc, log)


@test
def a_case_set_in_parts_runs_a_step_per_part():
    # tools/sanitize_set.tsv's part column: a step (and a census) per part under each tool, the
    # part's own filter, Criterion's XML of each step asked for under OUT/cases; the report
    # names each part's step. SANITIZE_FILTER collapses the parts to one step a binary.
    with tempfile.TemporaryDirectory() as t:
        b = fake_bundle(t)
        write(f"{b}/tools/sanitize_set.tsv",
              "# fake\na_gpu_test\t*/san_x*\tone\na_gpu_test\t*/san_y*\ttwo\n")
        rc, log, seq, _ = run_tier(b, t, "--sanitize")
        assert rc == 0 and "sanitize" in seq, (rc, log)
        args = open(f"{t}/order.args").read().splitlines()
        assert len(args) == 8, args  # 4 tools x 2 parts
        for tool in ("memcheck", "racecheck", "initcheck", "synccheck"):
            for part, flt in (("one", "*/san_x*"), ("two", "*/san_y*")):
                want = (f"--tool {tool} --error-exitcode 1 --target-processes all bin/a_gpu_test "
                        f"--jobs 1 --filter {flt} --xml={b}/out/cases/"
                        f"sanitize_{tool}_a_gpu_test.{part}.xml")
                assert want in args, (want, args)
        rep = json.load(open(f"{b}/out/sanitize-report.json"))
        steps = [x["step"] for x in rep["tools"]["racecheck"]["steps"]]
        assert steps == ["sanitize_racecheck_a_gpu_test.one", "sanitize_racecheck_a_gpu_test.two"]
        assert all(x["passed"] for x in rep["tools"]["racecheck"]["steps"]), rep
        assert sorted(os.listdir(f"{b}/out/census")) == ["a_gpu_test.one.csv",
                                                         "a_gpu_test.two.csv"]
        os.remove(f"{t}/order.args")
        rc, log, _, _ = run_tier(b, t, "--sanitize", SANITIZE_FILTER="*/san_z*")
        args = open(f"{t}/order.args").read().splitlines()
        assert rc == 0 and len(args) == 4, (rc, args, log)
        assert all("--filter */san_z* --xml=" in x and "a_gpu_test.xml" in x for x in args), args


@test
def without_nightly_the_runner_is_unchanged():
    with tempfile.TemporaryDirectory() as t:
        b = fake_bundle(t)
        rc, log, seq, order = run_tier(b, t, "--sanitize", "--bench", "--fuzz-seconds", "7")
        assert rc == 0, (rc, log)
        assert seq == ["test", "replay", "sanitize", "fuzz", "bench"], seq
        assert "nightly" not in log and not os.path.exists(f"{b}/out/history.jsonl"), log
        assert re.findall(r"^fuzz \w+ (\d+)$", order, re.M) == ["7", "7"], order
        assert log.rstrip().splitlines()[-1] == "13 passed, 0 failed, 0 skipped", log
        rc, _, seq, _ = run_tier(b, t)
        assert rc == 0 and seq == ["test", "replay"], seq
        rc, log, _, _ = run_tier(b, t, "--budget", "5")
        assert rc == 2 and "--nightly" in log, (rc, log)


@test
def nightly_mutate_section_runs_a_sampled_pass_into_the_record():
    # --mutate N: the real tools/mutate.py over a planted kernel source in the bundle's relink/
    # tree (no device: the CPU checks, here two fake binaries that pass), seeded by the date; its
    # report goes into the night's record and the ledger report's mutation section. The ninth
    # session ran the same on a real bundle without a GPU; on the H200 a night's own sections
    # leave no room in one device command for a pass.
    with tempfile.TemporaryDirectory() as t:
        b = fake_bundle(t)
        for f in ("mutate.py", "mutation_equivalent.txt"):
            shutil.copy(os.path.join(HERE, f), f"{b}/tools/")
        os.makedirs(f"{b}/relink/src/kernels")
        write(f"{b}/relink/src/kernels/k.cu", "int f(int i, int n) { return i < n; }\n")
        write(f"{b}/relink/links.json", "{}\n")
        write(f"{b}/relink/nvcc.json", "{}\n")
        for n in ("contract_codes_test", "status_messages_test"):
            write(f"{b}/bin/{n}", FAKE_CRITERION, stat.S_IRWXU)
        rc, log, _, _ = run_tier(b, t, "--nightly", "--budget", "10", "--fuzz-seconds", "0",
                                 "--mutate", "1", MUTATE_TIMEOUT="60", MUTATE_JOBS="1")
        assert rc == 0, (rc, log)
        seed = time.strftime("%Y%m%d", time.gmtime())
        assert re.search(r"^nightly: mutation -- .*\(1 mutants, seed %s\)" % seed, log, re.M), log
        rep = json.load(open(f"{b}/out/mutate/mutation-report.json"))
        assert len(rep["results"]) == 1 and rep["results"][0]["file"] == "kernels/k.cu", rep
        rec = json.loads(open(f"{b}/out/history.jsonl").read().splitlines()[-1])
        mu = rec["mutation"]
        assert mu["mutants"] == 1 and f"seed {seed}" in mu["meta"], mu
        md = open(f"{b}/out/ledger-report.md").read()
        assert f"seed {seed}" in section(md, "Mutation (sampled)"), md


if __name__ == "__main__":
    sys.exit(main("ledger_test"))
