#!/usr/bin/env python3
"""mla_golden: the golden fixtures of golden/ in numpy, inputs included (stdlib + numpy only).

A fixture stores a case's outputs (golden/<case>.safetensors, whole or as a few rows) and the
manifest (golden/manifest.json) the SHA-256 of every input and output. Inputs are not stored:
they are a pure function of (case seed, tensor name, element index) through Philox4x32-10
(tests/lib/mla_fill.h), which this module reimplements bit for bit in vectorised numpy; inputs of
fill "explicit" (the rope positions, the gathered list gather_idx) come from the manifest's
"values"; the select stage's own score plane sel_score (geometry select_scores) is the realistic
fill with the special-value overlay kpool_special_scores. Loading a case checks
every regenerated input and every whole stored output against the manifest's SHA-256 and raises
HashMismatch (naming case, tensor, expected and got hashes) on any difference.

    import mla_golden as mg
    case = mg.load_case("glm5_decode")          # inputs regenerated and checked, outputs checked
    case.inputs["q_nope"], case.outputs["q_lat"], case.rows["q_lat"]   # rows: None = whole
    case.tolerance("o_lat")                      # "attn"
    bound = case.bound("o_lat")                  # per-element bound, as tests/lib/compare.c
    report = case.compare("o_lat", my_o_lat)     # the C verdict; print(report)

Outputs stored as a row subset (manifest "stored_rows") hold only those rows along axis 0:
case.rows[name] lists their indices, and their full-tensor SHA-256 cannot be checked from the
subset (case.full_sha_checked[name] is False). bf16 tensors are uint16 arrays of the raw bits
(bf16_to_f32 widens them exactly). PyTorch: torch.from_numpy(case.inputs["cache"]).

CLI (python3 tools/golden/mla_golden.py ...; --dir DIR or $MLA_GOLDEN_DIR, default golden/):
    list                     the cases of the manifest
    show CASE                geometry, inputs (fill), outputs (stage, class, shape, stored rows)
    check CASE... | --all    regenerate every input, check every hash; exit 1 on a mismatch
    export CASE DIR          DIR/inputs/*.npy, DIR/outputs/*.npy (+ NAME.rows.npy), case.json
A python3 without numpy (e.g. a pyenv one) re-runs the CLI under /usr/bin/python3 when that one
has Debian's python3-numpy.
"""
import argparse
import hashlib
import json
import math
import os
import struct
import sys
import time

try:
    import numpy as np
except ImportError:  # pragma: no cover (depends on the interpreter)
    _SYS = "/usr/bin/python3"
    if (__name__ == "__main__" and os.path.exists(_SYS)
            and os.path.realpath(sys.executable) != os.path.realpath(_SYS)
            and not os.environ.get("MLA_GOLDEN_REEXEC")):
        os.environ["MLA_GOLDEN_REEXEC"] = "1"
        os.execv(_SYS, [_SYS] + sys.argv)
    raise

MANIFEST_FORMAT = "mla-golden-manifest"
MANIFEST_FORMAT_VERSION = 1
GENERATOR_VERSION = 1  # MLA_FILL_VERSION of tests/lib/mla_fill.h
TOLERANCE_CLASSES = ("exact", "rope", "attn", "pool_key", "bf16_gemm")

# safetensors dtypes (tests/lib/safetensors.c); BF16 is kept as its raw uint16 bits.
DTYPES = {
    "F32": np.dtype("<f4"), "BF16": np.dtype("<u2"), "F16": np.dtype("<f2"),
    "F64": np.dtype("<f8"), "I32": np.dtype("<i4"), "I64": np.dtype("<i8"),
    "I16": np.dtype("<i2"), "I8": np.dtype("i1"), "U8": np.dtype("u1"), "BOOL": np.dtype("?"),
}
ST_MAX_HEADER = 100 * 1024 * 1024
ST_MAX_DIMS = 8


class GoldenError(Exception):
    """A fixture, a manifest or a request this module refuses (the message says why)."""


class HashMismatch(GoldenError):
    """A regenerated input or a stored output whose SHA-256 is not the manifest's."""

    def __init__(self, case, tensor, expected, got, what):
        self.case, self.tensor, self.expected, self.got = case, tensor, expected, got
        super().__init__(f"golden case {case}: {tensor}: SHA-256 mismatch: manifest expects "
                         f"{expected}, got {got} ({what})")


# ------------------------------------------------------------------ Philox4x32-10 ------------
PHILOX_M0, PHILOX_M1 = 0xD2511F53, 0xCD9E8D57  # Random123's multipliers
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85  # and Weyl key increments
_MASK32 = np.uint64(0xFFFFFFFF)
_SH32 = np.uint64(32)


def philox4x32_10(ctr, key):
    """Random123's philox4x32 with 10 rounds. ctr: uint32 array (..., 4); key: (k0, k1) ints.
    Returns the uint32 array (..., 4)."""
    ctr = np.asarray(ctr, dtype=np.uint32)
    c0, c1, c2, c3 = (ctr[..., i].astype(np.uint64) for i in range(4))
    k0, k1 = int(key[0]) & 0xFFFFFFFF, int(key[1]) & 0xFFFFFFFF
    m0, m1 = np.uint64(PHILOX_M0), np.uint64(PHILOX_M1)
    for r in range(10):
        if r:
            k0, k1 = (k0 + PHILOX_W0) & 0xFFFFFFFF, (k1 + PHILOX_W1) & 0xFFFFFFFF
        p0 = m0 * c0  # 32 x 32 -> 64 bits: exact in uint64
        p1 = m1 * c2
        c0, c1, c2, c3 = ((p1 >> _SH32) ^ c1 ^ np.uint64(k0), p1 & _MASK32,
                          (p0 >> _SH32) ^ c3 ^ np.uint64(k1), p0 & _MASK32)
    return np.stack([c0, c1, c2, c3], axis=-1).astype(np.uint32)


def fnv1a32(name):
    """32-bit FNV-1a of a tensor name (mla_fill_name_hash)."""
    h = 2166136261
    for b in name.encode():
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def fill_words(seed, name, n, start=0, chunk_blocks=1 << 20):
    """The raw Philox words of elements start..start+n-1 of tensor `name` (mla_fill_word):
    key {seed, fnv1a32(name)}, counter {idx/4 low 32 bits, high 32 bits, 0, 0}, word idx % 4."""
    key = (int(seed) & 0xFFFFFFFF, fnv1a32(name))
    out = np.empty(n, dtype=np.uint32)
    if n == 0:
        return out
    b_lo, b_hi = start >> 2, (start + n - 1) >> 2
    for b0 in range(b_lo, b_hi + 1, chunk_blocks):
        blk = np.arange(b0, min(b0 + chunk_blocks, b_hi + 1), dtype=np.uint64)
        ctr = np.zeros((blk.size, 4), dtype=np.uint32)
        ctr[:, 0] = (blk & _MASK32).astype(np.uint32)
        ctr[:, 1] = (blk >> _SH32).astype(np.uint32)
        words = philox4x32_10(ctr, key).reshape(-1)  # elements 4 * b0 ...
        lo = max(start, 4 * b0)
        hi = min(start + n, 4 * (b0 + blk.size))
        out[lo - start:hi - start] = words[lo - 4 * b0:hi - 4 * b0]
    return out


def fill_of_words(kind, words, scale):
    """mla_fill_of_word, elementwise: the f32 values of raw words under a fill.
    realistic: f32((w >> 8) - 2^23) * 2^-23 (exact) times f32 scale (one f32 rounding);
    small_int: f32((w % 9) - 4) (exact) times f32 scale (one f32 rounding)."""
    w = np.asarray(words, dtype=np.uint32)
    s = np.float32(scale)
    if kind == "small_int":
        return ((w % np.uint32(9)).astype(np.int32) - 4).astype(np.float32) * s
    if kind == "realistic":
        m = (w >> np.uint32(8)).astype(np.int32) - np.int32(1 << 23)
        return (m.astype(np.float32) * np.float32(2.0 ** -23)) * s
    raise GoldenError(f"unknown fill kind '{kind}' (realistic, small_int; explicit is not "
                      "generated)")


def fill(kind, seed, name, shape, scale):
    """A whole generated input tensor (float32, row-major), as mla_fill_host_f32."""
    n = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    return fill_of_words(kind, fill_words(seed, name, n), scale).reshape(shape)


def kpool_special_scores(words, realistic):
    """The select stage's own score plane (geometry select_scores, tests/lib/stages_kpool.c
    kpool_special_score): by k = w & 15 of each element's Philox word w: 0 NaN (sign bit 31 of
    w, payload ((w >> 8) & 0x7FFFFF) | 1), 1 -inf, 2 +inf, 3 +0, 4 -0, 5..9 the tie level
    (0.5, -0.75, 1.0)[(w >> 8) % 3], 10..15 the realistic value. Returns float32."""
    w = np.asarray(words, dtype=np.uint32)
    k = w & np.uint32(15)
    nan_bits = ((w & np.uint32(0x80000000)) | np.uint32(0x7F800000)
                | ((w >> np.uint32(8)) & np.uint32(0x7FFFFF)) | np.uint32(1))
    level = np.float32([0.5, -0.75, 1.0])[(w >> np.uint32(8)) % np.uint32(3)]
    specials = np.uint32([0, 0xFF800000, 0x7F800000, 0x00000000, 0x80000000]).view(np.float32)
    out = np.where(k <= 9, level, np.asarray(realistic, dtype=np.float32)).astype(np.float32)
    out = np.where(k <= 4, specials[np.minimum(k, 4)], out).astype(np.float32)
    bits = out.view(np.uint32).copy()
    bits[k == 0] = nan_bits[k == 0]
    return bits.view(np.float32)


NONFINITE_BITS = np.uint32([0xFFC12345, 0x7F800000, 0xFF800000, 0x80000000, 0x00000001,
                            0x80000003, 0x7F800001])


def repeat_rows(case, name, x):
    """A repeated context (geometry idx_repeat R > 0, tests/lib/stages_kpool.c
    kpool_repeat_rows): rows r >= R of idx_k and idx_gate are copies of row r % R."""
    rep = case.geom("idx_repeat") or 0
    if rep <= 0 or name not in ("idx_k", "idx_gate"):
        return x
    x = np.array(x, copy=True)
    r = np.arange(x.shape[0])
    return x[r % rep]


def dense_nonfinite_overlay(case, name, x):
    """The dense inputs' special values (geometry nonfinite, tests/lib/stages_dense.c
    dense_nonfinite_overlay; the table there): fixed elements replaced by NaN (payloads, a
    signalling one), +-inf, -0 and subnormals. x: the filled float32 tensor; returns a copy."""
    if not case.geom("nonfinite"):
        return x
    g = case.geom
    H, R, dr, dn, dv = g("n_head"), g("kv_rank"), g("d_rope"), g("d_nope"), g("d_v")
    W, tq, tkv = R + dr, g("t_q"), g("t_kv")
    bits = np.ascontiguousarray(x, dtype=np.float32).reshape(-1).view(np.uint32).copy()
    n = bits.size

    def put(e, k):
        if 0 <= e < n:
            bits[e] = NONFINITE_BITS[k]

    if name == "kv":
        for i in range(tq):
            for k in range(7):
                if 1 + k < W:
                    put(i * W + 1 + k, k)
    elif name == "q_pe_raw" and dr > 2:
        npos = g("n_positions") or tq
        put(0, 0)
        put((1 % npos) * H * dr + 2, 1)
    elif name == "q_nope" and H > 4 and dn > 9:
        put((0 * H + 1) * dn + 5, 0)
        put(((1 % tq) * H + 2) * dn + 7, 1)
        put(((tq - 1) * H + 3) * dn + 0, 3)
        put(((tq - 1) * H + 4) * dn + 9, 4)
    elif name == "cache" and tkv > 1 and W > 2:
        put(n - 1, 0)
        put(0, 3)
        put(1, 4)
        put(W + 2, 5)
    elif name == "wv_b" and dv > 7 and R > 11:
        put(((5 % H) * dv + 7) * R + 11, 1)
    return bits.view(np.float32).reshape(np.shape(x))


def sha256_hex(arr):
    return hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()


# ------------------------------------------------------------------ bf16 ---------------------
def bf16_from_f32(x):
    """oracle_bf16_from_f32: round to nearest even on the upper 16 bits; a NaN keeps its sign and
    top payload bits and is made quiet. x: float32 array -> uint16 bits."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    lsb = (u >> np.uint32(16)) & np.uint32(1)
    rounded = ((u.astype(np.uint64) + 0x7FFF + lsb) >> np.uint64(16)).astype(np.uint16)
    quiet = ((u >> np.uint32(16)) | np.uint32(0x0040)).astype(np.uint16)
    return np.where(nan, quiet, rounded)


def bf16_to_f32(b):
    """Exact widening of bf16 bits (uint16) to float32."""
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


# ------------------------------------------------------------------ safetensors --------------
def read_safetensors(path):
    """Parses a safetensors file: u64 little-endian header length N, N bytes of JSON, the data
    section. Returns ({name: array}, metadata). Refuses (GoldenError naming the file) what the C
    reader refuses: short file, header over the file or 100 MiB, bad JSON / entries / dtypes /
    shapes, sizes that disagree with the offsets, ranges that do not tile the data section."""
    try:
        with open(path, "rb") as f:
            buf = f.read()
    except OSError as e:
        raise GoldenError(f"{path}: cannot read: {e}") from None
    if len(buf) < 8:
        raise GoldenError(f"{path}: shorter than the 8-byte header length")
    (hlen,) = struct.unpack("<Q", buf[:8])
    if hlen > len(buf) - 8 or hlen > ST_MAX_HEADER:
        raise GoldenError(f"{path}: header length {hlen} exceeds the file or {ST_MAX_HEADER}")
    try:
        header = json.loads(buf[8:8 + hlen].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise GoldenError(f"{path}: header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise GoldenError(f"{path}: header is not a JSON object")
    data = memoryview(buf)[8 + hlen:]
    meta = header.pop("__metadata__", {}) or {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise GoldenError(f"{path}: __metadata__ is not an object of strings")
    spans, tensors = [], {}
    for name, e in header.items():
        if not isinstance(e, dict):
            raise GoldenError(f"{path}: tensor {name}: entry is not an object")
        dt, shape, offs = e.get("dtype"), e.get("shape"), e.get("data_offsets")
        if dt not in DTYPES:
            raise GoldenError(f"{path}: tensor {name}: unknown dtype {dt!r}")
        if (not isinstance(shape, list) or len(shape) > ST_MAX_DIMS
                or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                           for d in shape)):
            raise GoldenError(f"{path}: tensor {name}: bad shape {shape!r}")
        if (not isinstance(offs, list) or len(offs) != 2
                or not all(isinstance(o, int) and o >= 0 for o in offs) or offs[0] > offs[1]
                or offs[1] > len(data)):
            raise GoldenError(f"{path}: tensor {name}: bad data_offsets {offs!r}")
        nbytes = int(np.prod(shape, dtype=np.int64)) * DTYPES[dt].itemsize
        if offs[1] - offs[0] != nbytes:
            raise GoldenError(f"{path}: tensor {name}: {dt} {shape} is {nbytes} bytes, offsets "
                              f"span {offs[1] - offs[0]}")
        spans.append((offs[0], offs[1], name))
        tensors[name] = np.frombuffer(data[offs[0]:offs[1]], dtype=DTYPES[dt]).reshape(shape)
    at = 0
    for b, e, name in sorted(spans):
        if b != at:
            raise GoldenError(f"{path}: tensor {name}: data ranges overlap or leave a gap at "
                              f"byte {at}")
        at = e
    if at != len(data):
        raise GoldenError(f"{path}: the tensors cover {at} of {len(data)} data bytes")
    return tensors, meta


# ------------------------------------------------------------------ manifest -----------------
def default_dir():
    """$MLA_GOLDEN_DIR, else the golden/ of this checkout (or runfiles tree), else ./golden."""
    env = os.environ.get("MLA_GOLDEN_DIR")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))  # no symlink resolution: runfiles work
    cand = os.path.join(here, "..", "..", "golden")
    if os.path.exists(os.path.join(cand, "manifest.json")):
        return os.path.normpath(cand)
    return "golden"


def load_manifest(golden_dir=None):
    """golden/manifest.json as a dict, format and version checked."""
    path = os.path.join(golden_dir or default_dir(), "manifest.json")
    try:
        with open(path, encoding="utf-8") as f:
            m = json.load(f)
    except (OSError, ValueError) as e:
        raise GoldenError(f"{path}: cannot load the manifest: {e}") from None
    if not isinstance(m, dict) or m.get("format") != MANIFEST_FORMAT:
        raise GoldenError(f"{path}: field 'format' missing or not \"{MANIFEST_FORMAT}\"")
    if m.get("format_version") != MANIFEST_FORMAT_VERSION:
        raise GoldenError(f"{path}: format_version {m.get('format_version')}, this reader reads "
                          f"{MANIFEST_FORMAT_VERSION}")
    if not isinstance(m.get("cases"), list):
        raise GoldenError(f"{path}: field 'cases' is not an array")
    return m


def case_names(golden_dir=None):
    return [c["name"] for c in load_manifest(golden_dir)["cases"]]


def _manifest_case(manifest, name):
    for c in manifest["cases"]:
        if c.get("name") == name:
            return c
    raise GoldenError(f"case {name!r} is not in the manifest (cases: "
                      f"{', '.join(c.get('name', '?') for c in manifest['cases'])})")


class Case:
    """One golden case: manifest entry, inputs (regenerated), stored outputs, their rows.

    name, model, seed, generator_version, command, file, geometry (dict; absent fields 0),
    input_specs / output_specs (the manifest entries, in manifest order),
    inputs {name: array}, outputs {name: stored array}, rows {name: row indices or None},
    full_sha_checked {output name: True (whole, hash checked) / False (row subset)}."""

    def __init__(self, entry, golden_dir):
        self.entry, self.golden_dir = entry, golden_dir
        for k in ("name", "model", "seed", "generator_version", "command", "file"):
            setattr(self, k, entry[k])
        self.geometry = dict(entry["geometry"])
        self.input_specs, self.output_specs = entry["inputs"], entry["outputs"]
        self.inputs, self.outputs, self.rows, self.full_sha_checked = {}, {}, {}, {}
        self.timings = {}

    def geom(self, key, default=0):
        return self.geometry.get(key, default)

    def tolerance(self, name):
        """The output's tolerance class (manifest "tolerance")."""
        return self.output_specs[name]["tolerance"]

    def stage(self, name):
        return self.output_specs[name].get("stage")

    def tensor(self, name):
        """An input or a stored output by name."""
        if name in self.inputs:
            return self.inputs[name]
        if name in self.outputs:
            return self.outputs[name]
        raise GoldenError(f"case {self.name}: no tensor {name!r} loaded")

    def _rows_of(self, name, rows):
        """Rows `rows` (indices into the full tensor; None = all) of an input or output."""
        x = self.tensor(name)
        have = self.rows.get(name)
        if have is None:
            return x if rows is None else x[rows]
        if rows is None:
            raise GoldenError(f"case {self.name}: {name} is stored as rows {list(have)} only")
        pos = {int(r): i for i, r in enumerate(have)}
        missing = [int(r) for r in rows if int(r) not in pos]
        if missing:
            raise GoldenError(f"case {self.name}: rows {missing} of {name} are not stored")
        return x[[pos[int(r)] for r in rows]]

    def bound(self, name, R=0, D=0):
        """The per-element bound of output `name` (shaped like its stored array), as the C suites
        compute it (tests/lib/compare.c; attn / attn_gathered with the any-walk R = D = N + 1
        unless R, D given); zeros for the exact class."""
        spec, cls, stage = self.output_specs[name], self.tolerance(name), self.stage(name)
        rows = self.rows.get(name)
        shape = self.outputs[name].shape
        g = self.geom
        if cls == "exact":
            return np.zeros(shape)
        if cls == "rope":
            return rope_bounds(self._rows_of("q_pe_raw", rows))
        if cls == "attn":
            qp = self._rows_of("q_pe", rows) if g("d_rope") else None
            if stage == "attn_gathered":
                lst = "gather_idx" if "gather_idx" in self.input_specs else "idx"
                return attn_gathered_bounds(self._rows_of("q_lat", rows), qp,
                                            self.inputs["cache"], self._rows_of(lst, rows),
                                            g("scale"), R, D)
            return attn_bounds(self._rows_of("q_lat", rows), qp, self.inputs["cache"],
                               g("t_q"), g("t_kv"), g("scale"), rows, R, D)
        if cls == "pool_key":
            state = np.concatenate([self.inputs["idx_k"], self.inputs["idx_gate"]], axis=1)
            pools = np.arange(g("n_pools")) if rows is None else np.asarray(rows)
            return pool_key_bounds(state, self.inputs["idx_ape"], g("pool"), pools)
        if cls == "bf16_gemm":
            absorb = stage == "bf16_absorb"
            x32 = self._rows_of("q_nope" if absorb else "o_lat", rows)
            w32 = self.inputs["wk_b" if absorb else "wv_b"]
            geo = dict(self.geometry, t_q=x32.shape[0])
            a = bf16_gemm_operands(geo, absorb, x32, w32)
            y_is_bf16 = spec["dtype"] == "BF16"
            ref = self.outputs[name].reshape(-1) if y_is_bf16 else None
            atol = bf16_gemm_bounds(a["w"], a["x"], ref, a["m"], a["n"], a["k"], a["x_rs"],
                                    a["x_bs"], a["y_rs"], a["y_bs"], a["batch"], y_is_bf16)
            return atol.reshape(shape)
        raise GoldenError(f"case {self.name}: output {name}: no bound for class {cls!r}")

    def compare(self, name, got, R=0, D=0, bytes_exact=False):
        """`got` (the full output, or its stored rows) against the stored output under the
        output's class and bound (the C verdict). Returns a CompareReport."""
        ref, rows = self.outputs[name], self.rows.get(name)
        got = np.asarray(got)
        if rows is not None and got.shape != ref.shape:
            got = got[rows]
        if got.shape != ref.shape:
            raise GoldenError(f"case {self.name}: {name}: got shape {got.shape}, stored "
                              f"{ref.shape}")
        cls = self.tolerance(name)
        b = None if cls == "exact" else self.bound(name, R, D)
        return compare(got, ref, cls, b, name=f"{self.name}/{name}", bytes_exact=bytes_exact)


def load_case(name, golden_dir=None, inputs=True, manifest=None):
    """Loads case `name`: the stored outputs (every whole one checked against its manifest
    SHA-256; row subsets checked against the manifest's stored_rows) and the inputs (all when
    inputs is True, none when False, else the listed names), each regenerated and checked against
    its manifest SHA-256. Raises HashMismatch / GoldenError on any problem."""
    golden_dir = golden_dir or default_dir()
    m = manifest or load_manifest(golden_dir)
    entry = _manifest_case(m, name)
    case = Case(entry, golden_dir)
    if case.generator_version != GENERATOR_VERSION:
        raise GoldenError(f"case {name}: generator_version {case.generator_version}, this reader "
                          f"generates version {GENERATOR_VERSION}")
    t0 = time.perf_counter()
    _load_outputs(case)
    case.timings["outputs"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    want = case.input_specs if inputs is True else ([] if not inputs else list(inputs))
    for iname in want:
        if iname not in case.input_specs:
            raise GoldenError(f"case {name}: no input {iname!r}")
        case.inputs[iname] = regenerate_input(case, iname)
    case.timings["inputs"] = time.perf_counter() - t0
    return case


def regenerate_input(case, name):
    """One input of the case, regenerated (or rebuilt from "values") and hash-checked."""
    spec = case.input_specs[name]
    shape, dt, kind = tuple(spec["shape"]), spec["dtype"], spec["fill"]["kind"]
    if kind == "explicit":
        if "values" not in spec:
            raise GoldenError(f"case {case.name}: input {name} is explicit and the manifest has "
                              "no \"values\" for it (regenerate the manifest: golden regen)")
        if dt not in DTYPES:
            raise GoldenError(f"case {case.name}: input {name}: unknown dtype {dt!r}")
        x = np.asarray(spec["values"], dtype=np.int64)
        if x.size != int(np.prod(shape, dtype=np.int64)):
            raise GoldenError(f"case {case.name}: input {name}: {x.size} values for shape "
                              f"{list(shape)}")
        x = x.astype(DTYPES[dt]).reshape(shape)
    else:
        if dt != "F32":
            raise GoldenError(f"case {case.name}: input {name}: generated inputs are F32, "
                              f"manifest says {dt}")
        x = fill(kind, case.seed, name, shape, spec["fill"]["scale"])
        if name == "sel_score" and case.geom("select_scores"):
            x = kpool_special_scores(fill_words(case.seed, name, x.size), x.reshape(-1))
            x = x.reshape(shape)
        x = dense_nonfinite_overlay(case, name, x)
        x = repeat_rows(case, name, x)
    got = sha256_hex(x)
    if got != spec["sha256"]:
        raise HashMismatch(case.name, f"input {name}", spec["sha256"], got,
                           f"regenerated with fill {kind} x {spec['fill']['scale']}, seed "
                           f"{case.seed}: the generator, the seed or the manifest changed")
    return x


def _load_outputs(case):
    path = os.path.join(case.golden_dir, case.file)
    tensors, meta = read_safetensors(path)
    extra = sorted(set(tensors) - set(case.output_specs))
    if extra:
        raise GoldenError(f"case {case.name}: {path} holds tensors the manifest does not list: "
                          f"{extra}")
    for name, spec in case.output_specs.items():
        if name not in tensors:
            raise GoldenError(f"case {case.name}: output {name} is missing from {path}")
        x, dt = tensors[name], spec["dtype"]
        if dt not in DTYPES or x.dtype != DTYPES[dt]:
            raise GoldenError(f"case {case.name}: output {name} in {path} is {x.dtype}, the "
                              f"manifest says {dt}")
        rows = spec.get("stored_rows")
        want = list(spec["shape"])
        if rows is not None:
            want[0] = len(rows)
            rows = np.asarray(rows, dtype=np.int64)
            if np.any(rows < 0) or np.any(rows >= spec["shape"][0]) or np.any(np.diff(rows) <= 0):
                raise GoldenError(f"case {case.name}: output {name}: stored_rows {list(rows)} "
                                  f"are not strictly ascending row indices in [0, "
                                  f"{spec['shape'][0]})")
            key = f"stored_rows.{name}"
            if key in meta and meta[key] != ",".join(str(int(r)) for r in rows):
                raise GoldenError(f"case {case.name}: output {name}: {path} stores rows "
                                  f"{meta[key]}, the manifest lists {list(rows)}")
        if list(x.shape) != want:
            raise GoldenError(f"case {case.name}: output {name} in {path} has shape "
                              f"{list(x.shape)}, expected {want}")
        if rows is None:
            got = sha256_hex(x)
            if got != spec["sha256"]:
                raise HashMismatch(case.name, f"output {name}", spec["sha256"], got,
                                   f"the stored bytes in {path}: a damaged or stale fixture")
        case.outputs[name] = x
        case.rows[name] = rows
        case.full_sha_checked[name] = rows is None


# ------------------------------------------------------------------ tolerance bounds ---------
U_F32 = 2.0 ** -24


def gamma_n(n):
    return n * U_F32 / (1.0 - n * U_F32)


def _vmath(fn, x):
    """libm's fn (the C code's) elementwise over a float64 array."""
    x = np.asarray(x, dtype=np.float64)
    return np.fromiter(map(fn, x.ravel().tolist()), dtype=np.float64, count=x.size).reshape(
        x.shape)


def rope_bounds(x_in):
    """rope: for the pair (x0, x1) of the rope INPUT (pairs contiguous in row-major order),
    atol = 2^-21 (|x0| + |x1|) + 2^-148 for both elements (mla_tol_rope_bounds)."""
    x = np.abs(np.asarray(x_in, dtype=np.float32).astype(np.float64)).reshape(-1)
    out = np.empty_like(x)
    n2 = x.size // 2 * 2
    b = 2.0 ** -21 * (x[0:n2:2] + x[1:n2:2]) + 2.0 ** -148
    out[0:n2:2] = b
    out[1:n2:2] = b
    if x.size & 1:
        out[-1] = 2.0 ** -21 * x[-1] + 2.0 ** -148
    return out.reshape(np.shape(x_in))


def _attn_tau(a, N, R, D, under=0.0):
    """attn_one's (tau, floor): tau = expm1(2 xi) + 2 gamma(2D) + 3u, xi = a + (4R + ln N + 4) u
    + under, where a = (gamma(K) + 6u) Lambda (array), N (array of lam's shape) the number of
    terms, under = |scale| K 2^-150 (the logit dot's subnormal products); floor =
    (3N + 3) 2^-150, the underflow of o's own path (docs/tolerances.md)."""
    R = np.asarray(R, dtype=np.float64)
    D = np.asarray(D, dtype=np.float64)
    Rr = np.where((R <= 0) | (R > N + 1), N + 1, R)
    Dd = np.where((D <= 0) | (D > N + 1), N + 1, D)
    xi = a + (4 * Rr + _vmath(math.log, N) + 4) * U_F32 + under
    tau = _vmath(math.expm1, 2 * xi) + 2 * gamma_n(2 * Dd) + 3 * U_F32
    return tau, (3 * N + 3) * 2.0 ** -150


def _attn_from_m(ql, qp, M, N, scale, R, D):
    """ql [q][H][kv_rank], qp [q][H][d_rope] or None, M [q][K] column maxima, N [q] terms:
    atol [q][H][kv_rank] = tau * M[r] (attn_one, in the same double operation order)."""
    ql = np.abs(np.asarray(ql, dtype=np.float32).astype(np.float64))
    kv_rank = ql.shape[-1]
    terms = ql * M[:, None, :kv_rank]
    if qp is not None and np.shape(qp)[-1]:
        qp = np.abs(np.asarray(qp, dtype=np.float32).astype(np.float64))
        terms = np.concatenate([terms, qp * M[:, None, kv_rank:]], axis=-1)
    K = terms.shape[-1]
    # lam += |q[c]| * M[c], c ascending from 0.0: a sequential sum (cumsum is sequential)
    lam = np.cumsum(terms, axis=-1)[..., -1] if K else np.zeros(terms.shape[:-1])
    lam = lam * abs(float(np.float32(scale)))
    lam = (gamma_n(K) + 6 * U_F32) * lam
    Nb = np.broadcast_to(np.asarray(N, dtype=np.float64)[:, None], lam.shape)
    R, D = np.asarray(R, dtype=np.float64), np.asarray(D, dtype=np.float64)
    if R.ndim == 1:  # per query (a stated walk): broadcast over the heads
        R, D = R[:, None], D[:, None]
    tau, floor = _attn_tau(lam, Nb, R, D, abs(float(np.float32(scale))) * K * 2.0 ** -150)
    return tau[..., None] * M[:, None, :kv_rank] + floor[..., None]


def _colmax(a):
    """max |a| over axis 0 in double with the C's NaN rule (a NaN sticks), 0 when empty."""
    if a.shape[0] == 0:
        return np.zeros(a.shape[1:])
    return np.max(np.abs(a.astype(np.float64)), axis=0)


WALK_TILE = 16  # MLA_ATTN_WALK_TILE of kernels/mla.h


def stated_walk(n_terms, n_slots):
    """The walk the C kernels state (kernels/mla.h mla_attn_walk), per query: N valid terms over
    W walk slots (absorbed W = N, gathered W = n_slots): R = min(N, ceil(W / 16)),
    D = min(16, N) + R + 1. Returns (R, D) as float64 arrays."""
    n = np.asarray(n_terms, dtype=np.int64)
    tiles = (np.asarray(n_slots, dtype=np.int64) + WALK_TILE - 1) // WALK_TILE
    r = np.minimum(n, tiles)
    return r.astype(np.float64), (np.minimum(n, WALK_TILE) + r + 1).astype(np.float64)


def attn_bounds(q_lat, q_pe, cache, t_q, t_kv, scale, query_rows=None, R=0, D=0, walk=None):
    """attn_absorbed (mla_tol_attn_bounds): q_lat [q][H][kv_rank] and q_pe [q][H][d_rope] (or
    None) of the queries query_rows (indices in 0..t_q-1; None = all t_q), cache [t_kv][K].
    Query i sees rows 0..t_kv-t_q+i: N = t_kv - t_q + i + 1, M[c] = max |cache[j][c]| over those
    rows. R, D <= 0: the any-walk R = D = N + 1 (right for a kernel whose walk is not known, a
    PyTorch or Triton one); walk="stated": the walk of this repository's kernels, as the C
    suites use (stated_walk). Returns the float64 atol [q][H][kv_rank]."""
    qi = np.arange(t_q) if query_rows is None else np.asarray(query_rows, dtype=np.int64)
    cache = np.asarray(cache, dtype=np.float32)
    last = t_kv - t_q + qi
    run = np.maximum.accumulate(np.abs(cache.astype(np.float64)), axis=0)  # NaN sticks, as C
    M = run[last]
    if walk == "stated":
        R, D = stated_walk(last + 1, last + 1)
    elif walk is not None:
        raise GoldenError(f"walk must be None or 'stated', not {walk!r}")
    return _attn_from_m(q_lat, q_pe, M, last + 1, scale, R, D)


def attn_gathered_bounds(q_lat, q_pe, cache, idx, scale, R=0, D=0, walk=None):
    """attn_gathered (mla_tol_attn_gathered_bounds): as attn_bounds over the rows idx[i][s] >= 0
    (repeats counted; walk="stated": N terms over W = n_slots slots); a query with no valid
    entry gets 0 (exact)."""
    cache = np.asarray(cache, dtype=np.float32)
    idx = np.asarray(idx)
    q = idx.shape[0]
    M = np.zeros((q, cache.shape[1]))
    N = np.zeros(q)
    for i in range(q):
        rows = idx[i][idx[i] >= 0]
        N[i] = rows.size
        M[i] = _colmax(cache[rows])
    safe_n = np.where(N > 0, N, 1.0)
    if walk == "stated":
        R, D = stated_walk(safe_n, idx.shape[1])
    elif walk is not None:
        raise GoldenError(f"walk must be None or 'stated', not {walk!r}")
    out = _attn_from_m(q_lat, q_pe, M, safe_n, scale, R, D)
    out[N == 0] = 0.0
    return out


def pool_key_bounds(state, ape, pool, pools, state_rows=0):
    """pool_key (mla_tol_pool_key_bounds): state rows [k | gate] (2d wide; logical row r at
    r % state_rows when state_rows > 0), ape [pool][d]; the bound of key[p][c] for p in `pools`:
    tau * M, tau = expm1(2 (3G + 4) u) + 2 gamma(pool) + 3u, G = max_s |gate + ape| (in double),
    M = max_s |k|. Returns [len(pools)][d]."""
    state = np.asarray(state, dtype=np.float32)
    ape = np.asarray(ape, dtype=np.float32).astype(np.float64)
    d = state.shape[1] // 2
    pools = np.asarray(pools, dtype=np.int64)
    r = pools[:, None] * pool + np.arange(pool)[None, :]
    if state_rows:
        r = r % state_rows
    rows = state[r]  # [P][pool][2d]
    G = np.max(np.abs(rows[..., d:].astype(np.float64) + ape[None, :, :]), axis=1)
    M = np.max(np.abs(rows[..., :d].astype(np.float64)), axis=1)
    xi = (3 * G + 4) * U_F32
    tau = _vmath(math.expm1, 2 * xi) + 2 * gamma_n(pool) + 3 * U_F32
    return tau * M


def bf16_gemm_operands(geom, absorb, x32, w32):
    """mla_bf16_gemm_operands: the bf16 operands and layout of a bf16 GEMM stage.
    absorb: x = bf16(q_nope) [t][H][d_nope], w = bf16(wk_b) transposed per head to
    [H][kv_rank][d_nope]; decompress: x = bf16(o_lat) [t][H][kv_rank], w = bf16(wv_b)
    [H][d_v][kv_rank]. geom: a dict with n_head, kv_rank, d_nope, d_v, t_q."""
    H, R = int(geom["n_head"]), int(geom["kv_rank"])
    m = int(geom["t_q"])
    n = R if absorb else int(geom["d_v"])
    k = int(geom["d_nope"]) if absorb else R
    w32 = np.asarray(w32, dtype=np.float32)
    w = np.ascontiguousarray(w32.reshape(H, k, n).transpose(0, 2, 1)) if absorb else w32
    return {"m": m, "n": n, "k": k, "batch": H, "x_rs": H * k, "x_bs": k, "y_rs": H * n,
            "y_bs": n, "x": bf16_from_f32(np.asarray(x32, np.float32)).reshape(-1),
            "w": bf16_from_f32(w).reshape(-1)}


def bf16_gemm_bounds(w_bf16, x_bf16, ref_bf16, m, n, k, x_rs, x_bs, y_rs, y_bs, batch,
                     y_is_bf16):
    """bf16_gemm (mla_tol_bf16_gemm_bounds), the C signature on flat arrays: atol indexed like y
    (b * y_bs + i * y_rs + j); S = sum_kk |x w| summed in double, kk ascending (the C order);
    f32 y: gamma2(k) S; bf16 y: (1 + 2^-6) (gamma2(k) S + 2^-7 |ref_bf16|)."""
    g2 = k * 2.0 ** -23 / (1.0 - k * 2.0 ** -23)
    xf = bf16_to_f32(np.asarray(x_bf16).reshape(-1)).astype(np.float64)
    wf = bf16_to_f32(np.asarray(w_bf16).reshape(-1)).astype(np.float64)
    b, i = np.arange(batch), np.arange(m)
    xi = b[:, None, None] * x_bs + i[None, :, None] * x_rs + np.arange(k)[None, None, :]
    X = xf[xi]  # [batch][m][k]
    W = wf.reshape(batch, n, k)
    S = np.zeros((batch, m, n))
    for kk in range(k):  # sequential in kk, like the C loop (every product exact in double)
        S += np.abs(X[:, :, kk, None] * W[:, None, :, kk])
    yi = b[:, None, None] * y_bs + i[None, :, None] * y_rs + np.arange(n)[None, None, :]
    atol = np.zeros(int(yi.max()) + 1 if yi.size else 0)
    if y_is_bf16:
        ref = np.abs(bf16_to_f32(np.asarray(ref_bf16).reshape(-1)).astype(np.float64))
        atol[yi] = (1.0 + 2.0 ** -6) * (g2 * S + 2.0 ** -7 * ref[yi])
    else:
        atol[yi] = g2 * S
    return atol


# ------------------------------------------------------------------ the verdict --------------
ULP_INF = (1 << 64) - 1


def _ordered(bits, width):
    sign = np.int64(1) << np.int64(width - 1)
    b = bits.astype(np.int64)
    return np.where(b & sign, -(b & (sign - 1)), b)


class CompareReport:
    """The result of compare(): the fields of mla_cmp_result, indices also unravelled."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __bool__(self):
        return bool(self.passed)

    def __str__(self):
        s = (f"{'PASS' if self.passed else 'FAIL'}: {self.name or '?'}, class {self.cls}\n"
             f"  {self.n_diff} of {self.n} elements differ, {self.n_fail} fail")
        if self.n_nan_mismatch:
            s += f", {self.n_nan_mismatch} NaN"
        if self.n_inf_mismatch:
            s += f", {self.n_inf_mismatch} inf/mask mismatch"
        ulp = "inf" if self.max_ulp == ULP_INF else str(self.max_ulp)
        s += (f"; max abs error {self.max_abs:.9g} at {list(self.max_abs_at)}; max ulp {ulp} at "
              f"{list(self.max_ulp_at)}")
        if self.has_worst:
            wu = "inf" if self.worst_ulp == ULP_INF else str(self.worst_ulp)
            s += (f"\n  worst element {list(self.worst_at)}: got {self.got_worst!r} ref "
                  f"{self.ref_worst!r} abs error {self.worst_abs:.9g} ulp {wu}")
            if self.cls != "exact":
                s += f" bound {self.worst_bound:.3g}"
        return s


def compare(got, ref, cls, bound=None, name=None, bytes_exact=False):
    """The C verdict (tests/lib/compare.c mla_compare_f32 / _bf16, testbed.c's int32 compare).
    got, ref: float32 arrays, bf16 bits (uint16) or integer arrays, same shape. cls: "exact"
    (bitwise, any NaN equals any NaN; integers: equal values) or a bounded class, where a NaN
    passes only against a NaN, infinities must match exactly, and finite pairs need
    |got - ref| <= bound_i (a non-finite bound_i: compared exact). bytes_exact: also fail on any
    byte difference except between two NaNs (the GPU suites' check of an exact output against
    the oracle, TB_BYTES_NAN_ANY: -0 vs +0 counts, NaN payloads do not, since a kernel writes the
    canonical NaN where the oracle propagates an input's payload). Returns a CompareReport."""
    got, ref = np.asarray(got), np.asarray(ref)
    if got.shape != ref.shape or got.dtype != ref.dtype:
        raise GoldenError(f"compare {name}: got {got.dtype} {got.shape}, ref {ref.dtype} "
                          f"{ref.shape}")
    shape = ref.shape
    n = ref.size
    g, r = got.reshape(-1), ref.reshape(-1)
    if g.dtype == np.float32:
        gb, rb, width = g.view(np.uint32), r.view(np.uint32), 32
        gf, rf = g, r
    elif g.dtype == np.uint16:  # bf16 bits
        gb, rb, width = g, r, 16
        gf, rf = bf16_to_f32(g), bf16_to_f32(r)
    elif np.issubdtype(g.dtype, np.integer):
        if cls != "exact":
            raise GoldenError(f"compare {name}: integer tensors are compared exact")
        gb, rb, width = g, r, None
        gf, rf = g.astype(np.float64), r.astype(np.float64)
    else:
        raise GoldenError(f"compare {name}: unsupported dtype {g.dtype}")
    if cls != "exact" and bound is None:
        raise GoldenError(f"compare {name}: class {cls} needs a per-element bound")
    bits_equal = gb == rb
    gn, rn = np.isnan(gf), np.isnan(rf)
    differs = ~(bits_equal | (gn & rn))
    finite = np.isfinite(gf) & np.isfinite(rf)
    with np.errstate(invalid="ignore", over="ignore"):
        ae = np.where(finite, np.abs(gf.astype(np.float64) - rf.astype(np.float64)), 0.0)
    if width:
        ulp = np.abs(_ordered(gb, width) - _ordered(rb, width)).astype(np.uint64)
        ulp = np.where(gn | rn, np.where(gn & rn, np.uint64(0), np.uint64(ULP_INF)), ulp)
    else:
        ulp = np.where(bits_equal, 0, ULP_INF).astype(np.uint64)
    n_nan = int(np.count_nonzero(gn != rn))
    n_inf = int(np.count_nonzero(~gn & ~rn & (np.isinf(gf) | np.isinf(rf)) & (gf != rf)))
    bnd = np.zeros(n)
    if cls == "exact":
        fail = differs.copy()
        key = np.where(finite, ae, np.inf)
    else:
        bnd = np.broadcast_to(np.asarray(bound, dtype=np.float64), shape).reshape(-1)
        nan_any = gn | rn
        inf_any = ~nan_any & (np.isinf(gf) | np.isinf(rf))
        plain = ~nan_any & ~inf_any
        bfin = np.isfinite(bnd)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(bnd > 0, ae / np.where(bnd > 0, bnd, 1.0),
                             np.where(ae > 0, np.inf, 0.0))
        fail = np.where(nan_any, gn != rn,
                        np.where(inf_any, gf != rf,
                                 np.where(bfin, ~(ae <= bnd), differs)))
        key = np.where(plain & bfin, ratio, np.where(plain, np.where(finite, ae, np.inf), np.inf))
        bnd = np.where(plain, bnd, 0.0)
    if bytes_exact:
        fail = fail | (~bits_equal & ~(gn & rn))
    with np.errstate(invalid="ignore"):
        wk = np.where(fail, 2.0 + np.where(np.isinf(key), 1e300, key),
                      np.where(differs, 1.0 - 1.0 / (1.0 + ae), -1.0))
    wk = np.where(differs | fail, wk, -np.inf)
    has_worst = bool(np.any(differs | fail))
    wi = int(np.argmax(wk)) if has_worst else 0
    fin_ae = np.where(finite, ae, -1.0)
    mai = int(np.argmax(fin_ae)) if n and fin_ae.max() > 0 else 0
    mui = int(np.argmax(ulp)) if n else 0

    def at(i):
        return tuple(int(v) for v in np.unravel_index(i, shape)) if n else ()

    return CompareReport(
        name=name, cls=cls, n=n, n_diff=int(np.count_nonzero(differs)),
        n_fail=int(np.count_nonzero(fail)), n_nan_mismatch=n_nan, n_inf_mismatch=n_inf,
        max_abs=float(fin_ae[mai]) if n and fin_ae.max() > 0 else 0.0, max_abs_index=mai,
        max_abs_at=at(mai), max_ulp=int(ulp[mui]) if n else 0, max_ulp_index=mui,
        max_ulp_at=at(mui), has_worst=has_worst, worst_index=wi, worst_at=at(wi),
        got_worst=(gf if width == 16 else g)[wi].item() if n else None,
        ref_worst=(rf if width == 16 else r)[wi].item() if n else None,
        worst_abs=float(ae[wi]) if n and finite[wi] else math.inf,
        worst_ulp=int(ulp[wi]) if n else 0, worst_bound=float(bnd[wi]) if n else 0.0,
        passed=not bool(np.any(fail)) and (cls == "exact" or n_nan == 0))


# ------------------------------------------------------------------ CLI ----------------------
def _fmt_rows(rows):
    return "whole" if rows is None else f"rows {list(map(int, rows))} (full SHA not checkable)"


def cmd_list(args):
    m = load_manifest(args.dir)
    for c in m["cases"]:
        g = c["geometry"]
        print(f"{c['name']:<26} model {c['model']:<10} seed 0x{c['seed']:08x} t_q "
              f"{g.get('t_q', 0):<4} t_kv {g.get('t_kv', 0):<5} inputs {len(c['inputs']):<2} "
              f"outputs {len(c['outputs'])}")
    return 0


def cmd_show(args):
    m = load_manifest(args.dir)
    c = _manifest_case(m, args.case)
    print(f"case {c['name']}: model {c['model']}, seed {c['seed']} (0x{c['seed']:08x}), "
          f"generator_version {c['generator_version']}, file {c['file']}")
    if c.get("purpose"):
        print(f"  purpose: {c['purpose']}")
    print(f"  command: {c['command']}")
    print("  geometry: " + ", ".join(f"{k} {v}" for k, v in c["geometry"].items()))
    print("  inputs (regenerated; not stored):")
    for name, s in c["inputs"].items():
        f = s["fill"]
        how = (f"explicit values {s['values']}" if f["kind"] == "explicit" and "values" in s
               else f"{f['kind']} x {f['scale']:.9g}")
        print(f"    {name:<24} {s['dtype']:<4} {str(s['shape']):<18} {how}")
    print("  outputs (stored):")
    for name, s in c["outputs"].items():
        rows = s.get("stored_rows")
        print(f"    {name:<24} {s['dtype']:<4} {str(s['shape']):<18} stage "
              f"{s.get('stage', '?'):<18} class {s['tolerance']:<9} "
              f"{'whole' if rows is None else 'rows ' + str(rows)}")
    return 0


def cmd_check(args):
    m = load_manifest(args.dir)
    names = [c["name"] for c in m["cases"]] if args.all else args.cases
    if not names:
        print("check: name a case or --all", file=sys.stderr)
        return 2
    bad = 0
    t_all = time.perf_counter()
    for name in names:
        t0 = time.perf_counter()
        try:
            case = load_case(name, args.dir, manifest=m)
        except GoldenError as e:
            print(f"FAIL {name}: {e}")
            bad += 1
            continue
        n_el = sum(x.size for x in case.inputs.values())
        whole = sum(case.full_sha_checked.values())
        subset = len(case.outputs) - whole
        print(f"ok   {name:<26} {len(case.inputs)} inputs ({n_el} elements) regenerated and "
              f"hashed; {whole} whole outputs hashed, {subset} stored as rows (full SHA not "
              f"checkable)  {time.perf_counter() - t0:.2f} s")
        if args.verbose:
            for o in case.outputs:
                print(f"       {o:<24} {_fmt_rows(case.rows[o])}")
    print(f"{len(names) - bad} case(s) ok, {bad} failing, {time.perf_counter() - t_all:.2f} s")
    return 1 if bad else 0


def cmd_export(args):
    case = load_case(args.case, args.dir)
    for sub in ("inputs", "outputs"):
        os.makedirs(os.path.join(args.out, sub), exist_ok=True)
    for name, x in case.inputs.items():
        np.save(os.path.join(args.out, "inputs", name + ".npy"), x)
    for name, x in case.outputs.items():
        np.save(os.path.join(args.out, "outputs", name + ".npy"), x)
        if case.output_specs[name]["dtype"] == "BF16":
            np.save(os.path.join(args.out, "outputs", name + ".f32.npy"), bf16_to_f32(x))
        if case.rows[name] is not None:
            np.save(os.path.join(args.out, "outputs", name + ".rows.npy"), case.rows[name])
    with open(os.path.join(args.out, "case.json"), "w", encoding="utf-8") as f:
        json.dump(case.entry, f, indent=1)
        f.write("\n")
    print(f"wrote {len(case.inputs)} inputs and {len(case.outputs)} outputs of {case.name} to "
          f"{args.out} (bf16 as uint16 bits + .f32.npy; row subsets with NAME.rows.npy)")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="mla_golden.py", description=__doc__.split("\n")[0])
    p.add_argument("--dir", default=None, help="fixture folder (default: $MLA_GOLDEN_DIR or "
                   "the checkout's golden/)")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    s = sub.add_parser("show")
    s.add_argument("case")
    s = sub.add_parser("check")
    s.add_argument("cases", nargs="*")
    s.add_argument("--all", action="store_true")
    s.add_argument("-v", "--verbose", action="store_true")
    s = sub.add_parser("export")
    s.add_argument("case")
    s.add_argument("out")
    args = p.parse_args(argv)
    args.dir = args.dir or default_dir()
    try:
        return {"list": cmd_list, "show": cmd_show, "check": cmd_check,
                "export": cmd_export}[args.cmd](args)
    except GoldenError as e:
        print(f"mla_golden: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
