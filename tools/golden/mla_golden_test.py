#!/usr/bin/env python3
"""Tests of tools/golden/mla_golden.py (the numpy reader of golden/) and example_numpy.py:
Philox4x32-10 against Random123's published known-answer vectors; every case of the manifest
loads with every input regenerated to the manifest's SHA-256 (those hashes come from the C
generator, tests/lib/mla_fill.h: the cross-check of the numpy fills) and every whole output
matching its SHA-256; the bounds and the verdict of every non-exact output; the example's
recomputation of glm5_decode passes; and the negative controls: a one-ulp change to a stored
output, a changed seed, a changed explicit value and damaged files are refused loudly.
Writes each test as a JUnit case to $XML_OUTPUT_FILE; exits 1 when one fails."""
import ctypes
import ctypes.util
import io
import json
import os
import shutil
import struct
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET
from contextlib import redirect_stdout

import math

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import example_numpy  # noqa: E402
import mla_golden as mg  # noqa: E402

GOLDEN = mg.default_dir()
_CASES = {}


def case(name):
    """Each case loaded once (every input regenerated and hash-checked on load)."""
    if name not in _CASES:
        _CASES[name] = mg.load_case(name, GOLDEN)
    return _CASES[name]


def copy_fixture(tmp, name):
    """golden/manifest.json and the case's fixture, copied to tmp; returns the manifest dict."""
    m = mg.load_manifest(GOLDEN)
    entry = next(c for c in m["cases"] if c["name"] == name)
    shutil.copy(os.path.join(GOLDEN, "manifest.json"), tmp)
    shutil.copy(os.path.join(GOLDEN, entry["file"]), tmp)
    os.chmod(os.path.join(tmp, entry["file"]), 0o644)
    os.chmod(os.path.join(tmp, "manifest.json"), 0o644)
    return m


def write_manifest(tmp, m):
    with open(os.path.join(tmp, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(m, f, indent=1)


def tensor_offset(path, name):
    """The absolute byte offset of tensor `name`'s data in a safetensors file."""
    with open(path, "rb") as f:
        buf = f.read()
    (n,) = struct.unpack("<Q", buf[:8])
    header = json.loads(buf[8:8 + n])
    return 8 + n + header[name]["data_offsets"][0]


class Philox(unittest.TestCase):
    # Random123's kat_vectors: philox4x32 10 (counter, key -> output)
    KAT = [
        ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
         (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
    ]

    def test_known_answer_vectors(self):
        for ctr, key, want in self.KAT:
            got = mg.philox4x32_10(np.array([ctr], dtype=np.uint32), key)[0]
            self.assertEqual([int(v) for v in got], list(want), f"ctr {ctr} key {key}")

    def test_vectorised_equals_one_by_one(self):
        rng = np.random.default_rng(7)
        ctr = rng.integers(0, 2 ** 32, size=(64, 4), dtype=np.uint64).astype(np.uint32)
        key = (0x474C0501, mg.fnv1a32("cache"))
        batch = mg.philox4x32_10(ctr, key)
        for i in range(64):
            np.testing.assert_array_equal(batch[i], mg.philox4x32_10(ctr[i:i + 1], key)[0])

    def test_fnv1a32(self):
        self.assertEqual(mg.fnv1a32(""), 0x811C9DC5)
        self.assertEqual(mg.fnv1a32("a"), 0xE40C292C)
        self.assertEqual(mg.fnv1a32("foobar"), 0xBF9CF968)

    def test_counter_layout(self):
        """element idx: counter {idx/4 low, idx/4 high, 0, 0}, word idx % 4 (mla_fill_word),
        also past 2^34 elements (the high counter word) and from any start."""
        seed, name = 0x12345678, "wk_b"
        key = (seed, mg.fnv1a32(name))
        start = (1 << 34) + 3
        w = mg.fill_words(seed, name, 6, start=start)
        ctr = np.array([[0, 1, 0, 0], [1, 1, 0, 0], [2, 1, 0, 0]], np.uint32)  # blocks 2^32 + k
        np.testing.assert_array_equal(w, mg.philox4x32_10(ctr, key).reshape(-1)[3:9])
        full = mg.fill_words(seed, name, 1000)
        np.testing.assert_array_equal(mg.fill_words(seed, name, 100, start=451), full[451:551])
        small = mg.fill_words(seed, name, 1000, chunk_blocks=7)
        np.testing.assert_array_equal(small, full)

    def test_fill_formulas(self):
        w = np.array([0, 0xFF, 0x100, 0x80000000, 0xFFFFFFFF, 8, 9, 17], np.uint32)
        r = mg.fill_of_words("realistic", w, 1.0)
        np.testing.assert_array_equal(r[:5], np.float32([-1.0, -1.0, -1.0 + 2.0 ** -23, 0.0,
                                                          1.0 - 2.0 ** -23]))
        s = mg.fill_of_words("small_int", w, 0.125)
        np.testing.assert_array_equal(s, np.float32([-4, -1, 0, -2, -1, 4, -4, 4]) * 0.125)
        self.assertEqual(r.dtype, np.float32)
        with self.assertRaises(mg.GoldenError):
            mg.fill_of_words("explicit", w, 1.0)


class EveryCase(unittest.TestCase):
    def test_every_input_regenerates_to_the_manifest_sha(self):
        m = mg.load_manifest(GOLDEN)
        self.assertGreater(len(m["cases"]), 0)
        for entry in m["cases"]:
            c = case(entry["name"])  # raises on any input or whole-output mismatch
            self.assertEqual(list(c.inputs), list(entry["inputs"]), entry["name"])
            for name, spec in entry["inputs"].items():
                x = c.inputs[name]
                self.assertEqual(list(x.shape), spec["shape"])
                self.assertEqual(mg.sha256_hex(x), spec["sha256"], f"{entry['name']}/{name}")
                if spec["fill"]["kind"] == "explicit":
                    self.assertEqual(x.reshape(-1).tolist(), spec["values"])

    def test_every_whole_output_matches_its_sha(self):
        m = mg.load_manifest(GOLDEN)
        n_whole = n_rows = 0
        for entry in m["cases"]:
            c = case(entry["name"])
            for name, spec in entry["outputs"].items():
                x = c.outputs[name]
                if spec["stored_rows"] is None:
                    self.assertTrue(c.full_sha_checked[name])
                    self.assertIsNone(c.rows[name])
                    self.assertEqual(list(x.shape), spec["shape"])
                    self.assertEqual(mg.sha256_hex(x), spec["sha256"])
                    n_whole += 1
                else:
                    self.assertFalse(c.full_sha_checked[name])
                    self.assertEqual(c.rows[name].tolist(), spec["stored_rows"])
                    self.assertEqual(list(x.shape), [len(spec["stored_rows"])] + spec["shape"][1:])
                    n_rows += 1
        self.assertGreater(n_whole, 0)
        self.assertGreater(n_rows, 0)

    def test_rope_positions_follow_the_geometry(self):
        """The recorded positions: t_kv - t_q + i when n_positions == 0 (the case geometry)."""
        for entry in mg.load_manifest(GOLDEN)["cases"]:
            pos = entry["inputs"].get("positions")
            g = entry["geometry"]
            if pos is None or g.get("n_positions", 0):
                continue
            want = [g["t_kv"] - g["t_q"] + i for i in range(g["t_q"])]
            self.assertEqual(pos["values"], want, entry["name"])

    def test_bounds_and_verdict_of_every_bounded_output(self):
        """Each non-exact output: its bound has the stored shape, is finite and >= 0; the stored
        output passes against itself; moving one element past its bound fails."""
        seen = set()
        for entry in mg.load_manifest(GOLDEN)["cases"]:
            c = case(entry["name"])
            for name, spec in entry["outputs"].items():
                cls = spec["tolerance"]
                self.assertIn(cls, mg.TOLERANCE_CLASSES)
                if cls == "exact":
                    continue
                seen.add(cls)
                b = c.bound(name)
                ref = c.outputs[name]
                self.assertEqual(b.shape, ref.shape, f"{entry['name']}/{name}")
                # a bound is non-finite (the element compared exact, docs/tolerances.md) only
                # where the reference itself is: NaN / inf inputs (glm5_tp8_nonfinite)
                r32 = mg.bf16_to_f32(ref) if ref.dtype == np.uint16 else ref
                fin = np.isfinite(b)
                self.assertTrue(np.all(fin | ~np.isfinite(r32)), f"{entry['name']}/{name}")
                self.assertTrue(np.all(b[fin] >= 0))
                self.assertTrue(c.compare(name, ref).passed)
                got = ref.copy().reshape(-1)
                i = int(np.argmax(np.where(fin, b, -1.0).reshape(-1)))
                if ref.dtype == np.uint16:
                    v = mg.bf16_to_f32(got[i:i + 1])[0] + np.float32(4 * b.reshape(-1)[i] + 1e-3)
                    got[i] = mg.bf16_from_f32(np.float32([v]))[0]
                else:
                    got[i] = got[i] + np.float32(2 * b.reshape(-1)[i] + 1e-3)
                rep = c.compare(name, got.reshape(ref.shape))
                self.assertFalse(rep.passed, f"{entry['name']}/{name}")
                self.assertEqual(rep.worst_at, tuple(np.unravel_index(i, ref.shape)))
        self.assertEqual(seen, {"rope", "attn", "pool_key", "bf16_gemm"})


class Nonfinite(unittest.TestCase):
    def test_nonfinite_propagation_is_the_documented_one(self):
        """glm5_tp8_nonfinite (tests/lib/stages_dense.c dense_nonfinite_overlay): the copies
        keep the special bytes; the all-NaN o_lat rows are exactly the (query, head) pairs with
        a NaN / inf logit; out is +-inf only at [i][5][7] of the finite rows; and the comparator
        requires a NaN where the reference has one and refuses a NaN where it has none."""
        c = case("glm5_tp8_nonfinite")
        bits = mg.NONFINITE_BITS
        kv_rows = c.outputs["cache_rows"].view(np.uint32)
        for i in range(c.geom("t_q")):
            np.testing.assert_array_equal(kv_rows[i, 1:8], bits)  # bytes, payloads, -0
        o = c.outputs["o_lat"]
        nan_rows = sorted(map(tuple, np.argwhere(np.isnan(o).all(-1)).tolist()))
        want = sorted({(0, 0), (1, 0), (0, 1), (1, 2)} | {(3, h) for h in range(8)})
        self.assertEqual(nan_rows, want)
        self.assertFalse(np.isnan(o[2]).any() or np.isinf(o).any())
        out = c.outputs["out"]
        self.assertEqual(sorted(map(tuple, np.argwhere(np.isinf(out)).tolist())),
                         [(0, 5, 7), (1, 5, 7), (2, 5, 7)])
        self.assertTrue(c.compare("o_lat", o).passed)
        finite_where_nan = o.copy()
        finite_where_nan[3, 4, 9] = np.float32(0.0)
        self.assertFalse(c.compare("o_lat", finite_where_nan).passed)
        nan_where_finite = o.copy()
        nan_where_finite[2, 0, 0] = np.float32("nan")
        self.assertFalse(c.compare("o_lat", nan_where_finite).passed)


class TensorCoreSplit(unittest.TestCase):
    def test_3xtf32_split_drops_at_most_12u(self):
        """docs/tolerances.md (3xTF32 analysis): x = x_hi + x_lo with x_hi = tf32(x), x_lo =
        tf32(x - x_hi), x - x_hi exact in f32, and x_hi y_hi + x_hi y_lo + x_lo y_hi within 12u
        of x y (here: 10^6 random pairs over 2^+-20 magnitudes, in double)."""
        rng = np.random.default_rng(1)

        def tf32(v):  # round to nearest even keeping 10 stored mantissa bits
            b = v.astype(np.float32).view(np.uint32).astype(np.uint64)
            b = ((b + 0xFFF + ((b >> 13) & 1)) >> 13) << 13
            return b.astype(np.uint32).view(np.float32)

        n = 10 ** 6
        x = (rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-20, 20, n)).astype(np.float32)
        y = (rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-20, 20, n)).astype(np.float32)
        xh, yh = tf32(x), tf32(y)
        r = (x - xh).astype(np.float32)
        self.assertTrue(np.all(r.astype(np.float64) == x.astype(np.float64) - xh))  # exact
        xl, yl = tf32(r), tf32((y - yh).astype(np.float32))
        X, Y = x.astype(np.float64), y.astype(np.float64)
        got = xh.astype(np.float64) * yh + xh.astype(np.float64) * yl + xl.astype(np.float64) * yh
        rel = np.abs(got - X * Y) / np.abs(X * Y)
        self.assertLessEqual(rel.max(), 12 * 2.0 ** -24)

    def test_3xtf32_truncated_split_drops_at_most_48u(self):
        """docs/tolerances.md (the 3xTF32 arm as rebuilt, nineteenth session): x_hi = x with its
        low 13 bits cleared, r = x - x_hi exact in f32, x_lo = r as the mma reads it (its low 13
        bits ignored, i.e. truncated), and x_hi y_hi + x_hi y_lo + x_lo y_hi within 48u of x y
        (10^6 random pairs over 2^+-20 magnitudes, where every remainder is a normal number, in
        double). Truncation is looser than the round-to-nearest split: the largest loss must
        exceed 12u, or the test would not tell the two apart."""
        rng = np.random.default_rng(2)

        def trunc(v):  # clear the low 13 bits
            b = v.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
            return b.view(np.float32)

        n = 10 ** 6
        x = (rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-20, 20, n)).astype(np.float32)
        y = (rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-20, 20, n)).astype(np.float32)
        xh, yh = trunc(x), trunc(y)
        rx, ry = (x - xh).astype(np.float32), (y - yh).astype(np.float32)
        self.assertTrue(np.all(rx.astype(np.float64) == x.astype(np.float64) - xh))  # exact
        self.assertTrue(np.all(ry.astype(np.float64) == y.astype(np.float64) - yh))
        xl, yl = trunc(rx), trunc(ry)
        X, Y = x.astype(np.float64), y.astype(np.float64)
        got = xh.astype(np.float64) * yh + xh.astype(np.float64) * yl + xl.astype(np.float64) * yh
        rel = np.abs(got - X * Y) / np.abs(X * Y)
        self.assertLessEqual(rel.max(), 48 * 2.0 ** -24)
        self.assertGreater(rel.max(), 12 * 2.0 ** -24)


class Bounds(unittest.TestCase):
    def test_rope_formula(self):
        x = np.float32([[1.0, -2.0, 0.5, 0.0]])
        np.testing.assert_array_equal(mg.rope_bounds(x), [[3 * 2.0 ** -21 + 2.0 ** -148] * 2 +
                                                          [0.5 * 2.0 ** -21 + 2.0 ** -148] * 2])

    def test_attn_tau_matches_the_documented_table(self):
        """docs/tolerances.md: tau at Lambda = 0 (q = 0), any walk: N = 1: 2.1e-6,
        N = 2048: 1.5e-3."""
        for n, want in ((1, 2.1e-6), (2048, 1.5e-3)):
            cache = np.ones((n, 4), np.float32)
            b = mg.attn_bounds(np.zeros((1, 1, 4), np.float32), None, cache, 1, n, 0.0625)
            self.assertAlmostEqual(b[0, 0, 0] / want, 1.0, delta=0.05)

    def test_pool_key_tau_matches_the_documented_table(self):
        """docs/tolerances.md: P = 4: tau = 1.1e-6 at G = 0, 8.3e-6 at G = 20."""
        for G, want in ((0.0, 1.1e-6), (20.0, 8.3e-6)):
            state = np.zeros((4, 2), np.float32)
            state[:, 0] = 1.0
            state[0, 1] = G
            b = mg.pool_key_bounds(state, np.zeros((4, 1), np.float32), 4, [0])
            self.assertAlmostEqual(b[0, 0] / want, 1.0, delta=0.05)

    def test_stated_walk(self):
        """kernels/mla.h mla_attn_walk: the same table as compare_negative_control's C test, and
        the stated-walk tau at N = 2048, Lambda = 0 from the formula by hand."""
        for n, w, r, d in ((1, 1, 1, 3), (16, 16, 1, 18), (17, 17, 2, 19), (4096, 4096, 256, 273),
                           (10, 4096, 10, 21), (202752, 202752, 12672, 12689)):
            R, D = mg.stated_walk([n], [w])
            self.assertEqual((R[0], D[0]), (r, d))
        n, u = 2048, 2.0 ** -24
        cache = np.ones((n, 4), np.float32)
        q = np.zeros((1, 1, 4), np.float32)
        stated = mg.attn_bounds(q, None, cache, 1, n, 0.0625, walk="stated")[0, 0, 0]
        anyw = mg.attn_bounds(q, None, cache, 1, n, 0.0625)[0, 0, 0]
        xi = (4 * 128 + math.log(n) + 4) * u
        want = math.expm1(2 * xi) + 2 * (290 * u / (1 - 290 * u)) + 3 * u
        self.assertAlmostEqual(stated / want, 1.0, places=12)
        self.assertLess(stated, anyw / 4)
        g = mg.attn_gathered_bounds(q, None, cache, np.arange(n, dtype=np.int32)[None], 0.0625,
                                    walk="stated")[0, 0, 0]
        self.assertEqual(g, stated)  # all rows listed once: W = N
        with self.assertRaises(mg.GoldenError):
            mg.attn_bounds(q, None, cache, 1, n, 0.0625, walk="fast")

    def test_gathered_without_entries_is_exact(self):
        idx = np.array([[-1, -1], [0, 1]], np.int32)
        b = mg.attn_gathered_bounds(np.ones((2, 1, 3), np.float32), None,
                                    np.ones((2, 3), np.float32), idx, 0.1)
        self.assertTrue(np.all(b[0] == 0) and np.all(b[1] > 0))

    def test_bf16_rounding(self):
        f = np.float32([1.0, 1.00390625, 1.01171875, -3.0, np.inf, 3.4e38])
        np.testing.assert_array_equal(mg.bf16_from_f32(f),
                                      np.uint16([0x3F80, 0x3F80, 0x3F82, 0xC040, 0x7F80, 0x7F80]))
        nan = np.uint32([0xFF800001]).view(np.float32)
        self.assertEqual(int(mg.bf16_from_f32(nan)[0]), 0xFFC0)
        np.testing.assert_array_equal(mg.bf16_to_f32(np.uint16([0x3F80, 0xC040])), [1.0, -3.0])


class KpoolEdges(unittest.TestCase):
    def test_special_scores_formula(self):
        """kpool_special_scores (tests/lib/stages_kpool.c kpool_special_score), one word per k."""
        k = np.arange(16, dtype=np.uint32)
        w = (np.uint32(0x80000000) * (k & np.uint32(1))) | (np.uint32(0x12345) << np.uint32(8)) | k
        real = np.full(16, 0.3, np.float32)
        x = mg.kpool_special_scores(w, real)
        self.assertEqual(x.dtype, np.float32)
        b = x.view(np.uint32)
        self.assertEqual(int(b[0]), 0x7F800000 | 0x12345)  # NaN: sign from bit 31, payload | 1
        self.assertTrue(np.isnan(x[0]))
        self.assertEqual([int(v) for v in b[1:5]], [0xFF800000, 0x7F800000, 0, 0x80000000])
        level = np.float32([0.5, -0.75, 1.0])[(w[5:10] >> np.uint32(8)) % np.uint32(3)]
        self.assertEqual(len(set(level.tolist())), 2)  # bit 31 moves the level too
        np.testing.assert_array_equal(x[5:10], level)
        np.testing.assert_array_equal(x[10:], real[10:])

    def test_select_special_cut_is_a_tie(self):
        """glm5_kpool_select_special: the select_k-th ranked candidate ties with the next."""
        if "glm5_kpool_select_special" not in mg.case_names(GOLDEN):
            self.skipTest("case not in the manifest")
        c = case("glm5_kpool_select_special")
        s, k, fp = c.inputs["sel_score"], c.geom("select_k"), c.geom("first_pos")
        for i in range(s.shape[0]):
            vis = s[i][:min(c.geom("n_pools"), fp + i + 1)]
            finite = np.sort(vis[~np.isnan(vis)])[::-1]
            self.assertTrue(np.isnan(vis).any() and np.isneginf(vis).any())
            self.assertEqual(finite[k - 1], finite[k], f"query {i}")

    def test_smallint_cut_is_inside_a_tie_group(self):
        """glm5_next_kpool_smallint (a repeated context): every query's cut falls inside a tie
        group, some of it kept and some not, so the pool-index tie-break decides idx; the
        rows repeat with the stated period (idx_repeat)."""
        if "glm5_next_kpool_smallint" not in mg.case_names(GOLDEN):
            self.skipTest("case not in the manifest")
        c = case("glm5_next_kpool_smallint")
        rep, pool = c.geom("idx_repeat"), c.geom("pool")
        self.assertTrue(rep > 0 and rep % pool == 0)
        k_rows = c.inputs["idx_k"]
        np.testing.assert_array_equal(k_rows[rep:2 * rep], k_rows[:rep])
        s, k, fp = c.outputs["score"], c.geom("select_k"), c.geom("first_pos")
        for i in range(s.shape[0]):
            vis = s[i][:min(c.geom("n_pools"), (fp + i + 1) // pool)]
            self.assertGreater(len(vis), k)
            ranked = np.sort(vis)[::-1]
            cut = ranked[k - 1]
            kept = int(np.sum(ranked[:k] == cut))
            group = int(np.sum(vis == cut))
            self.assertTrue(0 < kept < group, f"query {i}: {kept} of a group of {group}")
            # the stored idx keeps the group's lowest pool indices (pool index breaks ties)
            members = np.flatnonzero(vis == cut)
            chosen = set(int(x) // pool for x in c.outputs["idx"][i][:k * pool:pool])
            self.assertEqual(sorted(chosen & set(members.tolist())), members[:kept].tolist())

    def test_gather_edges_bound_uses_the_explicit_list(self):
        """glm5_kpool_gather_edges: the all -1 query's output is +0 with bound 0, the others'
        bounds (over gather_idx) are positive."""
        if "glm5_kpool_gather_edges" not in mg.case_names(GOLDEN):
            self.skipTest("case not in the manifest")
        c = case("glm5_kpool_gather_edges")
        g = c.inputs["gather_idx"]
        self.assertTrue(np.all(g[0] == -1))
        o, b = c.outputs["o_lat_gathered"], c.bound("o_lat_gathered")
        self.assertTrue(np.all(o[0].view(np.uint32) == 0) and np.all(b[0] == 0))
        self.assertTrue(np.all(b[1:] > 0))


class Verdict(unittest.TestCase):
    def test_one_ulp_fails_exact(self):
        ref = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 5.0
        got = ref.copy()
        got[1, 2, 3] = np.nextafter(got[1, 2, 3], np.float32(np.inf))
        rep = mg.compare(got, ref, "exact")
        self.assertFalse(rep.passed)
        self.assertEqual((rep.n_diff, rep.n_fail, rep.max_ulp), (1, 1, 1))
        self.assertEqual(rep.worst_at, (1, 2, 3))
        self.assertIn("worst element [1, 2, 3]", str(rep))

    def test_exact_nan_equals_nan_and_signed_zero_differs(self):
        ref = np.float32([np.nan, 0.0, 1.0])
        got = np.uint32([0xFFC00001, 0, 0x3F800000]).view(np.float32)
        self.assertTrue(mg.compare(got, ref, "exact").passed)
        got2 = got.copy()
        got2[1] = -0.0
        self.assertFalse(mg.compare(got2, ref, "exact").passed)

    def test_bytes_exact_ignores_nan_payloads_only(self):
        ref = np.array([1.0, np.nan, 0.0], dtype=np.float32)
        ref.view(np.uint32)[1] = 0x7FC0DEAD  # the oracle propagates an input's payload
        got = ref.copy()
        got.view(np.uint32)[1] = 0x7FFFFFFF  # a kernel writes the canonical NaN
        self.assertTrue(mg.compare(got, ref, "exact", bytes_exact=True).passed)
        got[2] = -0.0
        self.assertFalse(mg.compare(got, ref, "exact", bytes_exact=True).passed)

    def test_bounded_classes(self):
        ref = np.float32([1.0, -np.inf, 2.0])
        bound = np.array([1e-3, 1e-3, 1e-3])
        self.assertTrue(mg.compare(np.float32([1.0005, -np.inf, 2.0]), ref, "attn", bound))
        self.assertFalse(mg.compare(np.float32([1.002, -np.inf, 2.0]), ref, "attn", bound))
        self.assertFalse(mg.compare(np.float32([np.nan, -np.inf, 2.0]), ref, "attn", bound))
        self.assertFalse(mg.compare(np.float32([1.0, -3e38, 2.0]), ref, "attn", bound))
        self.assertFalse(mg.compare(np.float32([1.0, np.inf, 2.0]), ref, "attn", bound))
        nan_ref = np.float32([np.nan, 1.0, 2.0])
        self.assertTrue(mg.compare(np.float32([np.nan, 1.0, 2.0]), nan_ref, "rope", bound))
        self.assertFalse(mg.compare(np.float32([0.0, 1.0, 2.0]), nan_ref, "rope", bound))
        inf_bound = np.array([np.inf, 1e-3, 1e-3])  # a non-finite bound: compared exact
        self.assertFalse(mg.compare(np.float32([1.0005, -np.inf, 2.0]), ref, "attn", inf_bound))
        with self.assertRaises(mg.GoldenError):
            mg.compare(ref, ref, "attn", None)

    def test_integers_and_bf16(self):
        idx = np.array([[3, 1, -1]], np.int32)
        self.assertTrue(mg.compare(idx, idx.copy(), "exact"))
        bad = idx.copy()
        bad[0, 2] = 0
        rep = mg.compare(bad, idx, "exact")
        self.assertFalse(rep.passed)
        self.assertEqual(rep.worst_at, (0, 2))
        y = mg.bf16_from_f32(np.float32([1.0, 2.0]))
        y2 = y.copy()
        y2[1] += 1
        self.assertFalse(mg.compare(y2, y, "exact"))
        self.assertTrue(mg.compare(y2, y, "bf16_gemm", np.array([0.0, 2.0 ** -6])))


class Example(unittest.TestCase):
    def test_example_recomputation_passes(self):
        results = example_numpy.run("glm5_decode", GOLDEN)
        self.assertEqual(len(results), 5)
        for label, rep in results:
            self.assertTrue(rep.passed, f"{label}\n{rep}")
        exact = [rep for label, rep in results if rep.cls == "exact"]
        self.assertTrue(all(rep.n_diff == 0 for rep in exact))

    def test_fmaf_emulation_against_libm(self):
        path = ctypes.util.find_library("m")
        if not path:
            self.skipTest("no libm")
        fmaf = ctypes.CDLL(path).fmaf
        fmaf.restype = ctypes.c_float
        fmaf.argtypes = [ctypes.c_float] * 3
        rng = np.random.default_rng(3)
        a = (rng.standard_normal(3000) * 2.0 ** rng.integers(-30, 30, 3000)).astype(np.float32)
        b = (rng.standard_normal(3000) * 2.0 ** rng.integers(-30, 30, 3000)).astype(np.float32)
        c = (-(a.astype(np.float64) * b) * (1 + rng.standard_normal(3000) * 2.0 ** -20))
        c = c.astype(np.float32)  # near-cancellation: the hard cases for double rounding
        c[::3] = rng.standard_normal(1000).astype(np.float32)
        got = example_numpy.fmaf(a, b, c)
        want = np.float32([fmaf(float(x), float(y), float(z)) for x, y, z in zip(a, b, c)])
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


class NegativeControls(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="mla_golden_test_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_one_ulp_change_to_a_stored_output_is_refused(self):
        copy_fixture(self.tmp, "glm5_decode")
        path = os.path.join(self.tmp, "glm5_decode.safetensors")
        off = tensor_offset(path, "q_lat") + 4 * 777
        with open(path, "r+b") as f:
            f.seek(off)
            (v,) = struct.unpack("<f", f.read(4))
            x = np.float32([v])
            mg_x = np.nextafter(x, np.float32(np.inf))
            f.seek(off)
            f.write(mg_x.tobytes())
        with self.assertRaises(mg.HashMismatch) as cm:
            mg.load_case("glm5_decode", self.tmp, inputs=False)
        e = cm.exception
        spec = mg.load_manifest(self.tmp)["cases"][0]["outputs"]["q_lat"]
        self.assertEqual((e.case, e.tensor, e.expected), ("glm5_decode", "output q_lat",
                                                          spec["sha256"]))
        self.assertNotEqual(e.got, e.expected)
        for s in ("glm5_decode", "q_lat", e.expected, e.got):
            self.assertIn(s, str(e))
        with redirect_stdout(io.StringIO()) as out:
            rc = mg.main(["--dir", self.tmp, "check", "glm5_decode"])
        self.assertEqual(rc, 1)
        self.assertIn("FAIL glm5_decode", out.getvalue())

    def test_changed_seed_is_refused(self):
        m = copy_fixture(self.tmp, "glm5_decode")
        entry = next(c for c in m["cases"] if c["name"] == "glm5_decode")
        entry["seed"] += 1
        write_manifest(self.tmp, m)
        with self.assertRaises(mg.HashMismatch) as cm:
            mg.load_case("glm5_decode", self.tmp)
        e = cm.exception
        self.assertEqual(e.case, "glm5_decode")
        self.assertTrue(e.tensor.startswith("input "), e.tensor)
        name = e.tensor.split()[1]
        self.assertEqual(e.expected, entry["inputs"][name]["sha256"])
        self.assertIn(e.expected, str(e))
        self.assertIn(e.got, str(e))

    def test_changed_explicit_value_is_refused(self):
        m = copy_fixture(self.tmp, "glm5_decode")
        entry = next(c for c in m["cases"] if c["name"] == "glm5_decode")
        entry["inputs"]["positions"]["values"][0] += 1
        write_manifest(self.tmp, m)
        with self.assertRaises(mg.HashMismatch) as cm:
            mg.load_case("glm5_decode", self.tmp, inputs=["positions"])
        self.assertEqual(cm.exception.tensor, "input positions")
        del entry["inputs"]["positions"]["values"]
        write_manifest(self.tmp, m)
        with self.assertRaisesRegex(mg.GoldenError, "no \"values\""):
            mg.load_case("glm5_decode", self.tmp, inputs=["positions"])

    def test_changed_fill_scale_is_refused(self):
        m = copy_fixture(self.tmp, "glm5_decode")
        entry = next(c for c in m["cases"] if c["name"] == "glm5_decode")
        entry["inputs"]["wk_b"]["fill"]["scale"] *= 1.0000001
        write_manifest(self.tmp, m)
        with self.assertRaisesRegex(mg.HashMismatch, "input wk_b"):
            mg.load_case("glm5_decode", self.tmp, inputs=["wk_b"])

    def test_damaged_safetensors_are_refused(self):
        copy_fixture(self.tmp, "glm5_rope_maxpos")
        path = os.path.join(self.tmp, "glm5_rope_maxpos.safetensors")
        with open(path, "rb") as f:
            buf = f.read()
        for bad, why in ((buf[:5], "shorter"), (buf[:-4], "data_offsets|cover"),
                         (struct.pack("<Q", 1 << 40) + buf[8:], "header length"),
                         (buf[:8] + b"[" + buf[9:], "JSON")):
            with open(path, "wb") as f:
                f.write(bad)
            with self.assertRaisesRegex(mg.GoldenError, why):
                mg.load_case("glm5_rope_maxpos", self.tmp, inputs=False)

    def test_stored_rows_disagreeing_with_the_file_are_refused(self):
        m = copy_fixture(self.tmp, "glm5_prefill")
        entry = next(c for c in m["cases"] if c["name"] == "glm5_prefill")
        rows = entry["outputs"]["q_lat"]["stored_rows"]
        rows[3] -= 1  # still ascending: the file's metadata disagrees
        write_manifest(self.tmp, m)
        with self.assertRaisesRegex(mg.GoldenError, "stores rows"):
            mg.load_case("glm5_prefill", self.tmp, inputs=False)
        rows[3] = rows[2]
        write_manifest(self.tmp, m)
        with self.assertRaisesRegex(mg.GoldenError, "strictly ascending"):
            mg.load_case("glm5_prefill", self.tmp, inputs=False)


class Cli(unittest.TestCase):
    def run_cli(self, *argv):
        with redirect_stdout(io.StringIO()) as out:
            rc = mg.main(["--dir", GOLDEN] + list(argv))
        return rc, out.getvalue()

    def test_list_names_every_case(self):
        rc, out = self.run_cli("list")
        self.assertEqual(rc, 0)
        names = [line.split()[0] for line in out.splitlines()]
        self.assertEqual(names, mg.case_names(GOLDEN))

    def test_show(self):
        rc, out = self.run_cli("show", "glm5_prefill")
        self.assertEqual(rc, 0)
        for s in ("positions", "explicit values", "wk_b", "realistic x", "o_lat",
                  "class attn", "class bf16_gemm", "rows [0, 1, 2, 63, 64, 126, 127]"):
            self.assertIn(s, out)
        self.assertEqual(self.run_cli("show", "no_such_case")[0], 1)

    def test_check_and_export(self):
        rc, out = self.run_cli("check", "glm5_rope_maxpos", "glm5_next_kpool_gate")
        self.assertEqual(rc, 0, out)
        self.assertIn("2 case(s) ok, 0 failing", out)
        tmp = tempfile.mkdtemp(prefix="mla_golden_export_")
        try:
            rc, out = self.run_cli("export", "glm5_next_kpool_gate", tmp)
            self.assertEqual(rc, 0, out)
            c = case("glm5_next_kpool_gate")
            for name, x in c.inputs.items():
                np.testing.assert_array_equal(np.load(os.path.join(tmp, "inputs", name + ".npy")),
                                              x)
            for name, x in c.outputs.items():
                np.testing.assert_array_equal(
                    np.load(os.path.join(tmp, "outputs", name + ".npy")), x)
                rows = os.path.join(tmp, "outputs", name + ".rows.npy")
                self.assertEqual(os.path.exists(rows), c.rows[name] is not None)
            with open(os.path.join(tmp, "case.json"), encoding="utf-8") as f:
                self.assertEqual(json.load(f)["name"], "glm5_next_kpool_gate")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class _Result(unittest.TextTestResult):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.cases = []  # (name, status, message, seconds)
        self._t0 = 0.0

    def startTest(self, test):
        self._t0 = time.perf_counter()
        super().startTest(test)

    def _add(self, test, status, msg=""):
        self.cases.append((test.id().split(".", 1)[-1], status, msg,
                           time.perf_counter() - self._t0))

    def addSuccess(self, test):
        super().addSuccess(test)
        self._add(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._add(test, "failed", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._add(test, "failed", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._add(test, "skipped", reason)


def main():
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=2, resultclass=_Result)
    res = runner.run(suite)
    xml = os.environ.get("XML_OUTPUT_FILE")
    if xml:
        root = ET.Element("testsuites")
        ts = ET.SubElement(root, "testsuite", name="mla_golden_test", tests=str(len(res.cases)))
        for name, status, msg, secs in res.cases:
            tc = ET.SubElement(ts, "testcase", classname="mla_golden_test", name=name,
                               time=f"{secs:.3f}")
            if status == "failed":
                ET.SubElement(tc, "failure", message=msg.strip().splitlines()[-1]).text = msg
            elif status == "skipped":
                ET.SubElement(tc, "skipped", message=msg)
        ET.ElementTree(root).write(xml, encoding="utf-8", xml_declaration=True)
    n = {s: sum(1 for c in res.cases if c[1] == s) for s in ("passed", "failed", "skipped")}
    print(f"{n['passed']} passed, {n['failed']} failed, {n['skipped']} skipped")
    return 0 if res.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
