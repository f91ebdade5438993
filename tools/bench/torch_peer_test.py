"""tools/bench/torch_peer_test.py: the PyTorch peer (tools/bench/torch_peer.py) on the CPU,
without torch.

  - its geometry is the C benchmarks' (tests/lib/geometry.h, tools/bench/bench_dense.cu);
  - without torch it says that the peer was not measured, and why, writes {"measured": false}
    and exits 0, and never prints a stored number;
  - the comparison table pairs each peer row with this project's base and best arm;
  - the self-check of the composites against the golden fixtures passes on the real formulas
    and fails on a planted wrong one (run through a small numpy stand-in for the torch calls the
    composites make, so the formulas are checked here and not first on the GPU).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:  # a python3 without numpy first on PATH: retry with Debian's (python3-numpy)
    if os.path.exists("/usr/bin/python3") and not os.environ.get("TORCH_PEER_TEST_REEXEC"):
        os.environ["TORCH_PEER_TEST_REEXEC"] = "1"
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE)))
from pycheck import main, test  # noqa: E402

import torch_peer as tp  # noqa: E402


def header_defines(path):
    out = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"#define (MLA_\w+) ([0-9.e+-]+)f?\b", line)
            if m:
                out[m.group(1)] = float(m.group(2))
    return out


@test
def the_geometry_is_the_c_benchmarks():
    d = header_defines(os.path.join(ROOT, "tests", "lib", "geometry.h"))
    g = tp.GLM5
    assert (g["n_head"], g["kv_rank"], g["d_rope"], g["d_nope"], g["d_v"]) == (
        d["MLA_GLM5_N_HEAD"], d["MLA_GLM5_KV_RANK"], d["MLA_GLM5_D_ROPE"], d["MLA_GLM5_D_NOPE"],
        d["MLA_GLM5_D_V"]), d
    assert g["scale"] == d["MLA_GLM5_SCALE"]
    L = tp.LONGCTX
    assert (L["rows"], L["t_q"], L["heads"], L["dim"]) == (
        d["MLA_LONGCTX_ROWS"], d["MLA_LONGCTX_T_Q"], d["MLA_INDEXER_HEADS"], d["MLA_INDEXER_DIM"])
    assert (L["pool"], L["select_k"], L["width"], L["always_tail"]) == (
        d["MLA_GLM5_NEXT_POOL"], d["MLA_GLM5_NEXT_SELECT_K"], d["MLA_GLM5_NEXT_WIDTH"],
        d["MLA_GLM5_NEXT_ALWAYS_TAIL"])
    assert abs(L["qk_scale"] - d["MLA_INDEXER_QK_SCALE"]) < 1e-15
    assert abs(L["head_scale"] - d["MLA_INDEXER_HEAD_SCALE"]) < 1e-15
    with open(os.path.join(HERE, "bench_dense.cu")) as f:
        src = f.read()
    assert f"T_KV_LONG = {tp.T_KV_LONG};" in src and f"T_MAX = {tp.T_MAX};" in src
    assert [w[0] for w in tp.DENSE_WIDTHS] == ["decode", "verify", "prefill"]
    with open(os.path.join(HERE, "bench_kpool.cu")) as f:
        src = f.read()
    assert 'shape("longctx_kpool", t_q, "")' in src  # the shape names match
    G = tp.GATHER  # the gathered attention's rows: glm5_kpool at t_q 512 (and 1) over 65536 rows
    assert f"mla_geom_glm5_kpool(t_q, {G['rows']})" in src
    assert 'shape("glm5_kpool", t_q, "")' in src and 'shape("glm5_kpool", 1, "")' in src
    assert (G["t_q"], G["slots"]) == (d["MLA_LONGCTX_T_Q"], d["MLA_GLM5_WIDTH"]), G
    assert d["MLA_GLM5_POOL"] == 1  # so the width is the slots


@test
def without_torch_the_peer_is_not_measured():
    try:
        import torch  # noqa: F401
        print("torch is importable here: the not-measured path is checked by its reason only")
        return
    except ImportError:
        pass
    with tempfile.TemporaryDirectory() as t:
        out = os.path.join(t, "peer.json")
        p = subprocess.run([sys.executable, os.path.join(HERE, "torch_peer.py"), "--json", out],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        assert "peer: not measured (torch is not importable" in p.stdout, p.stdout
        assert not re.search(r"\d+\.\d+ us", p.stdout)  # no number without a measurement
        r = json.load(open(out))
        assert r["measured"] is False and r["rows"] == [] and "torch" in r["reason"], r
        p = subprocess.run([sys.executable, os.path.join(HERE, "torch_peer.py"), "table",
                            "--peer", out], capture_output=True, text=True)
        assert p.returncode == 0 and "peer: not measured" in p.stdout, p.stdout


@test
def the_table_pairs_the_peer_with_base_and_best_arms():
    peer = [dict(kernel="decompress_v", shape="decode", arm="torch f32", median_us=13.4),
            dict(kernel="decompress_v", shape="decode", arm="torch tf32", median_us=12.0),
            dict(kernel="attn_absorbed", shape="decode t_kv 8192", arm="torch f32",
                 median_us=40.0)]
    ours = [dict(kernel="decompress_v", shape="decode", arm="split off", median_us=21.9,
                 floor_us=8.0),
            dict(kernel="decompress_v", shape="decode", arm="door: split 8", median_us=10.0),
            dict(kernel="absorb_q", shape="decode", arm="split off", median_us=15.1)]
    rows = tp.comparison(peer, ours)
    assert rows[0] == ("decompress_v", "decode", ("split off", 21.9), ("door: split 8", 10.0),
                       13.4, 12.0, 8.0), rows[0]
    assert rows[1] == ("attn_absorbed", "decode t_kv 8192", None, None, 40.0, None, None)
    md = tp.table(peer, ours)
    assert "| decompress_v | decode | 21.9 (split off) | 10.0 (door: split 8) | 13.4 | 12.0 | " \
           "1.34x | 1.20x | 8.0 |" in md, md
    assert "| attn_absorbed | decode t_kv 8192 | - | - | 40.0 | - | - | - | - |" in md, md


# ---- a numpy stand-in for the torch calls of the composites ----------------------------------
class T:
    def __init__(self, a):
        self.a = np.asarray(a)

    shape = property(lambda s: s.a.shape)
    T = property(lambda s: T(s.a.T))
    device = None

    def transpose(self, i, j):
        return T(np.swapaxes(self.a, i, j))

    def reshape(self, *s):
        return T(self.a.reshape(*s))

    view = reshape

    def __matmul__(self, o):
        return T(np.matmul(self.a, o.a))

    def __mul__(self, x):
        return T(self.a * (x.a if isinstance(x, T) else np.float32(x)))

    def __getitem__(self, k):
        return T(self.a[k.a if isinstance(k, T) else k])

    def __ge__(self, o):
        return T(self.a >= (o.a if isinstance(o, T) else o))

    def __invert__(self):
        return T(~self.a)

    def clamp(self, min=None):  # noqa: A002 (torch's keyword)
        return T(np.maximum(self.a, min))

    def any(self, dim):
        return T(self.a.any(axis=dim))

    def __gt__(self, o):
        return T(self.a > (o.a if isinstance(o, T) else o))

    def __add__(self, o):
        return T(self.a + (o.a if isinstance(o, T) else o))

    def __sub__(self, o):
        return T(self.a - (o.a if isinstance(o, T) else o))

    __rsub__ = lambda s, o: T(o - s.a)  # noqa: E731
    __radd__ = __add__

    def masked_fill(self, m, v):
        return T(np.where(m.a, np.float32(v), self.a))

    def cuda(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.a


class FakeTorch:
    class backends:
        class cuda:
            class matmul:
                allow_tf32 = False

    @staticmethod
    def from_numpy(a):
        return T(a)

    @staticmethod
    def bmm(a, b):
        return T(np.matmul(a.a, b.a))

    @staticmethod
    def cat(xs, dim):
        return T(np.concatenate([x.a for x in xs], axis=dim))

    @staticmethod
    def softmax(s, dim):
        a = s.a.astype(np.float64)
        with np.errstate(invalid="ignore"):  # a row of -inf gives NaN, as torch's does
            e = np.exp(a - a.max(axis=dim, keepdims=True))
            return T((e / e.sum(axis=dim, keepdims=True)).astype(np.float32))

    @staticmethod
    def arange(n, device=None):
        return T(np.arange(n))


@test
def the_composites_compute_the_kernels_functions():
    golden = os.path.join(ROOT, "golden")
    ft = FakeTorch()
    ops = tp.peer_ops(ft)
    lines = tp.self_check(ft, ops, golden)
    assert len(lines) == 8 and all(ln.startswith("self-check PASS") for ln in lines), lines
    assert sum("o_lat_gathered" in ln for ln in lines) == 2, lines
    # a planted wrong composite: attention without its softmax scale
    bad = dict(ops, attn=lambda q_lat, q_pe, cache, scale: ops["attn"](q_lat, q_pe, cache, 1.0))
    try:
        tp.self_check(ft, bad, golden)
        raise AssertionError("a wrong attention composite passed the self-check")
    except SystemExit as e:
        assert "self-check failed" in str(e) and "o_lat" in str(e), str(e)[:300]
    # gathered attention that lets a negative entry count as row 0 (the mask dropped)
    bad = dict(ops, gathered=lambda q_lat, q_pe, cache, idx, scale: ops["gathered"](
        q_lat, q_pe, cache, idx.clamp(min=0), scale))
    try:
        tp.self_check(ft, bad, golden)
        raise AssertionError("a gathered composite without the mask passed the self-check")
    except SystemExit as e:
        assert "o_lat_gathered" in str(e), str(e)[:300]
    # and one that puts the heads on the wrong axis of wk_b
    bad = dict(ops, absorb=lambda q, w: ft.bmm(q.transpose(0, 1), T(w.a[::-1].copy())))
    try:
        tp.self_check(ft, bad, golden)
        raise AssertionError("a wrong absorb composite passed the self-check")
    except SystemExit as e:
        assert "q_lat" in str(e), str(e)[:300]


if __name__ == "__main__":
    sys.exit(main("torch_peer_test"))
