"""tools/sanitize_report.py on recorded H200 output (tools/testdata/sanitize/: ncu census rows and
compute-sanitizer step results of the 2026-11-30 sanitizer run, trimmed): kernels are named with
their template arm, shared memory is read, a timed-out step covers nothing, and a shared-memory
kernel racecheck did not reach is named. And on a synthetic set whose binary is split in parts:
each part is its own step with its own census, a step near its timeout is listed, and the slowest
cases come from the Criterion XML."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "testdata", "sanitize")
CSV_HEAD = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
            '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
            '"Metric Value"')


def census_row(kernel, smem):
    return (f'"1","1","a_test","h","{kernel}(const float *)","1","7","(256, 1, 1)","(1, 1, 1)",'
            f'"0","9.0","m","launch__shared_mem_per_block_dynamic","byte/block","{smem}"')


def step_xml(name, seconds, failure=None):
    f = f'<failure message="{failure}">x</failure>' if failure else ""
    return (f'<?xml version="1.0"?>\n<testsuites><testsuite name="{name}" tests="1">\n'
            f'<testcase classname="{name}" name="{name}" time="{seconds}">\n{f}</testcase>'
            '</testsuite></testsuites>\n')


def parts_fixture():
    """A set of one binary in two parts (x_*, y_*) and one whole binary (b_test): racecheck of
    part one passed in 350 s, of part two timed out; memcheck of every set passed in 10 s."""
    d = tempfile.mkdtemp()
    for sub in ("census", "xml", "logs", "cases"):
        os.makedirs(os.path.join(d, sub))
    with open(os.path.join(d, "set.tsv"), "w") as f:
        f.write("# binary\tfilter\tpart\na_test\t*/x_*\tone\na_test\t*/y_*\ttwo\n"
                "b_test\t*/@(san_*|small)\n")
    for key, kernel, smem in (("a_test.one", "k_one", 1024), ("a_test.two", "k_two", 2048),
                              ("b_test", "k_b", 0)):
        with open(os.path.join(d, "census", key + ".csv"), "w") as f:
            f.write(CSV_HEAD + "\n" + census_row(kernel, smem) + "\n")
    steps = {"racecheck_a_test.one": (350, None), "racecheck_a_test.two": (420, "exit 124"),
             "racecheck_b_test": (5, None)}
    for key in ("a_test.one", "a_test.two", "b_test"):
        steps[f"memcheck_{key}"] = (10, None)
    for step, (sec, fail) in steps.items():
        name = "sanitize_" + step
        with open(os.path.join(d, "xml", name + ".xml"), "w") as f:
            f.write(step_xml(name, sec, fail))
    with open(os.path.join(d, "cases", "sanitize_racecheck_a_test.one.xml"), "w") as f:
        f.write('<?xml version="1.0"?>\n<testsuites><testsuite name="a">\n'
                '<testcase name="x_fast" assertions="1" status="PASSED" time="20.000"></testcase>\n'
                '<testcase name="x_slow" assertions="1" status="PASSED" time="300.500">'
                '</testcase>\n<testcase name="y_left_out" assertions="0" status="SKIPPED" '
                'time="0.000"><skipped/></testcase>\n</testsuite></testsuites>\n')
    return d


class SanitizeReport(unittest.TestCase):
    def run_report(self):
        out = tempfile.mkdtemp()
        subprocess.run([sys.executable, os.path.join(HERE, "sanitize_report.py"), "--set",
                        os.path.join(DATA, "set.tsv"), "--census", os.path.join(DATA, "census"),
                        "--xml", os.path.join(DATA, "xml"), "--logs", os.path.join(DATA, "logs"),
                        "--wall", "400", "--out", out], check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(out, "sanitize-report.json")) as f:
            rep = json.load(f)
        with open(os.path.join(out, "sanitize-report.md")) as f:
            md = f.read()
        return rep, md

    def test_census_names_template_arms_and_shared_memory(self):
        rep, _ = self.run_report()
        k = rep["kernels"]
        self.assertIn("attn_walk_f32<32, walk_causal, 1>", k)
        self.assertGreater(k["attn_walk_f32<32, walk_causal, 1>"], 0)
        self.assertGreater(k["kpool_select_radix_f32"], 0)
        self.assertEqual(k["index_append_ring_f32"], 0)

    def test_tools_cover_what_their_finished_steps_ran(self):
        rep, _ = self.run_report()
        mem = rep["tools"]["memcheck"]
        self.assertIn("kpool_select_radix_f32", mem["kernels_covered"])
        self.assertEqual(mem["shared_memory_kernels_missed"], [])

    def test_a_timed_out_racecheck_step_covers_nothing_and_is_named(self):
        rep, md = self.run_report()
        race = rep["tools"]["racecheck"]
        self.assertNotIn("kpool_select_radix_f32", race["kernels_covered"])
        self.assertIn("kpool_select_radix_f32", race["shared_memory_kernels_missed"])
        self.assertEqual(rep["timed_out"], 1)
        self.assertEqual(rep["failed"], 1)
        self.assertIn("TIMEOUT", md)
        self.assertIn("MISSED shared-memory kernels", md)


class SanitizeParts(unittest.TestCase):
    def run_parts(self, *extra):
        d = parts_fixture()
        out = tempfile.mkdtemp()
        subprocess.run([sys.executable, os.path.join(HERE, "sanitize_report.py"), "--set",
                        os.path.join(d, "set.tsv"), "--census", os.path.join(d, "census"),
                        "--xml", os.path.join(d, "xml"), "--logs", os.path.join(d, "logs"),
                        "--cases", os.path.join(d, "cases"), *extra, "--out", out], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(out, "sanitize-report.json")) as f:
            rep = json.load(f)
        with open(os.path.join(out, "sanitize-report.md")) as f:
            return rep, f.read()

    def test_each_part_is_a_step_with_its_own_census(self):
        rep, md = self.run_parts()
        race = rep["tools"]["racecheck"]
        self.assertEqual([s["step"] for s in race["steps"]],
                         ["sanitize_racecheck_a_test.one", "sanitize_racecheck_a_test.two",
                          "sanitize_racecheck_b_test"])
        self.assertEqual({s["binary"] for s in race["steps"]}, {"a_test", "b_test"})
        # the part that timed out covers nothing: its kernel is missed, the other part's is not
        self.assertIn("k_one", race["kernels_covered"])
        self.assertEqual(race["shared_memory_kernels_missed"], ["k_two"])
        self.assertEqual(rep["tools"]["memcheck"]["shared_memory_kernels_missed"], [])
        self.assertEqual(rep["timed_out"], 1)
        self.assertIn("| a_test.two | `*/y_*` | TIMEOUT |", md)
        # every row of a tool's table has its six cells, an extglob filter's pipes escaped
        rows = [l for l in md.splitlines() if l.startswith("| a_test") or l.startswith("| b_test")]
        self.assertTrue(rows)
        for l in rows:
            self.assertEqual(len(re.split(r"(?<!\\)\|", l)), 8, l)

    def test_slowest_cases_from_the_criterion_xml(self):
        rep, md = self.run_parts()
        one = rep["tools"]["racecheck"]["steps"][0]
        self.assertEqual(one["cases"], {"x_fast": 20.0, "x_slow": 300.5})  # not the skipped
        self.assertIn("x_slow 300.5, x_fast 20.0 (2 cases, 320 s)", md)
        self.assertEqual(rep["tools"]["racecheck"]["steps"][1]["cases"], {})

    def test_a_step_near_its_timeout_is_named(self):
        rep, md = self.run_parts("--timeout", "420")
        self.assertEqual(rep["near_timeout"], ["sanitize_racecheck_a_test.one"])
        self.assertIn("near its timeout: 350 of 420 s", md)
        self.assertIn("Near their timeout", md)
        rep, md = self.run_parts("--timeout", "600")
        self.assertEqual(rep["near_timeout"], [])
        self.assertNotIn("Near their timeout", md)
        rep, _ = self.run_parts()  # no --timeout: nothing is judged near
        self.assertEqual(rep["near_timeout"], [])

    def test_list_gives_the_case_sets_the_tier_runs(self):
        # run-gpu-tier.sh reads the set through --list: a key per part, or one row a binary
        d = parts_fixture()
        run = lambda *x: subprocess.run(
            [sys.executable, os.path.join(HERE, "sanitize_report.py"), "--set",
             os.path.join(d, "set.tsv"), "--list", *x], check=True, capture_output=True,
            text=True).stdout.splitlines()
        self.assertEqual(run(), ["a_test\t*/x_*\ta_test.one", "a_test\t*/y_*\ta_test.two",
                                 "b_test\t*/@(san_*|small)\tb_test"])
        self.assertEqual(run("--one-per-binary"),
                         ["a_test\t*/x_*\ta_test", "b_test\t*/@(san_*|small)\tb_test"])

    def test_a_malformed_or_repeated_row_is_refused(self):
        d = parts_fixture()
        for bad in ("a_test\n", "a_test\t*/x\tone\na_test\t*/y\tone\n", "a\tb\tc\td\n"):
            with open(os.path.join(d, "set.tsv"), "w") as f:
                f.write(bad)
            r = subprocess.run([sys.executable, os.path.join(HERE, "sanitize_report.py"), "--set",
                                os.path.join(d, "set.tsv"), "--census", d, "--xml", d, "--logs",
                                d, "--out", tempfile.mkdtemp()], capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0, bad)
            self.assertIn("set.tsv:", r.stderr, bad)


if __name__ == "__main__":
    unittest.main()
