"""tools/sanitize_report.py on recorded H200 output (tools/testdata/sanitize/: ncu census rows and
compute-sanitizer step results of the 2026-11-30 sanitizer run, trimmed): kernels are named with
their template arm, shared memory is read, a timed-out step covers nothing, and a shared-memory
kernel racecheck did not reach is named."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "testdata", "sanitize")


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


if __name__ == "__main__":
    unittest.main()
