#!/usr/bin/env python3
"""tools/bench/torch_peer.py: the PyTorch peer of the benchmarks, measured in the same run.

A kernel author who does not use this project writes the same steps as plain PyTorch ops
(cuBLAS underneath, in f32, or with TF32 allowed). This script times those composites at the
shapes of bench_dense and bench_kpool, the same way they time the project's kernels: the median
of REPS launches, each after a read-only L2 flush (a buffer of twice the L2 read by a sum) and a
GPU-side spin (so the host's dispatch is never inside the timing), CUDA events around the op
alone. It never uses a stored peer number: without torch, or without a
CUDA device, it says that the peer was not measured and why, and exits 0.

    torch_peer.py [--reps N] [--quick] [--json OUT] [--ours BENCH.json ...] [--self-check DIR]
        measure (when torch and a device are present), print the table, write OUT
    torch_peer.py table --peer PEER.json --ours BENCH.json ...
        the comparison table again from files (no torch needed)

The composites (the peer's output layouts are [h][t][...] where a head-batched GEMM writes them;
the kernels write [t][h][...], which for decode is the same memory):
  absorb_q       torch.bmm(q_nope^T [h,t,d], wk_b [h,d,r])
  decompress_v   torch.bmm(o_lat^T [h,t,r], wv_b^T [h,r,v])
  attn_absorbed  S = [q_lat | q_pe] [t*h, r+dr] @ cache^T * scale, the causal mask for t > 1,
                 softmax, then S @ cache[:, :r]
  attn_gathered  per query t: kv = cache[idx[t]] (a negative entry's row masked out), S = [q_lat |
                 q_pe] [h, r+dr] @ kv^T * scale by torch.bmm over the queries, softmax, then
                 S @ kv[:, :r]; a query with no valid entry +0 (the kernels' rule)
  kpool_score    per 8 heads: relu(q [t*8, d] @ keys^T * qk_scale), weighted by hw * head_scale
                 and summed over heads; pools past a query's visibility -inf (docs/kpool.md)
  kpool_select   torch.topk(score, select_k), the kept pools sorted, expanded to rows, the tail
                 rows, -1 padding (every longctx query sees far more than select_k pools)
Arms: "torch f32" (TF32 off) and "torch tf32" (torch.backends.cuda.matmul.allow_tf32) for the
GEMM steps. --self-check DIR first runs the f32 composites on golden cases (glm5_decode,
glm5_verify: tools/golden/mla_golden.py) and requires them inside the f32 bounds of the stored
outputs, so the timed work is the kernels' function.

Output: a markdown table (kernel, shape, this project's base arm and best arm, the peer arms,
the speedups, the run's floor) and, with --json, {"measured": bool, "reason": str, "gpu": str,
"rows": [bench_json-style rows with "arm": "torch f32" | "torch tf32"]}. The file is named by
the caller (run-gpu-tier.sh: OUT/peer-torch.json, not bench-*.json, so the ledger's
night-over-night comparison of this project's kernels does not include it).
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# glm5 (tests/lib/geometry.h; //tools/bench:torch_peer_test checks these against the header)
GLM5 = dict(n_head=64, kv_rank=512, d_rope=64, d_nope=192, d_v=256, scale=0.0625)
# bench_kpool.cu's gathered attention: glm5 heads, t_q queries each gathering MLA_GLM5_WIDTH slots
# of GATHER_ROWS cached rows (mla_geom_glm5_kpool(t_q, 65536)), every slot a uniform row
GATHER = dict(t_q=512, rows=65536, slots=2048)
T_KV_LONG, T_MAX = 32768, 512  # bench_dense.cu
LONGCTX = dict(rows=1048576, t_q=512, heads=32, dim=128, pool=4, select_k=512, width=2051,
               always_tail=1, qk_scale=0.08838834764831845, head_scale=0.17677669529663688)
DENSE_WIDTHS = [("decode", 1, T_KV_LONG), ("verify", 4, T_KV_LONG), ("prefill", T_MAX, T_MAX)]
# attention only: the other decode lengths
ATTN_EXTRA = [("decode t_kv 8192", 1, 8192), ("decode t_kv 131072", 1, 131072)]


def longctx_shape(t_q):
    return f"longctx_kpool t_q {t_q}"  # bench_kpool.cu's shape names


def gathered_shape(t_q):
    return f"glm5_kpool t_q {t_q}"


# ------------------------------------------------------------------ table ---------------------
def load_rows(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            data = json.load(f)
        rows += data["rows"] if isinstance(data, dict) else data
    return rows


def comparison(peer, ours):
    """Rows of (kernel, shape, base, best, f32, tf32, floor): base = this project's first arm
    for (kernel, shape) (the plain launcher), best = its fastest arm, each (arm, us) or None."""
    order, by = [], {}
    for r in peer:
        k = (r["kernel"], r["shape"])
        if k not in by:
            order.append(k)
            by[k] = {}
        by[k][r["arm"]] = r["median_us"]
    out = []
    for k in order:
        mine = [r for r in ours if (r["kernel"], r["shape"]) == k]
        base = (mine[0]["arm"], mine[0]["median_us"]) if mine else None
        best = min(((r["arm"], r["median_us"]) for r in mine), key=lambda x: x[1]) if mine else None
        floor = next((r.get("floor_us") for r in mine if r.get("floor_us")), None)
        out.append((k[0], k[1], base, best, by[k].get("torch f32"), by[k].get("torch tf32"), floor))
    return out


def fmt_us(x):
    return "-" if x is None else f"{x:.1f}"


def table(peer, ours):
    lines = ["| kernel | shape | this project, base arm (us) | best arm (us) | torch f32 (us) | "
             "torch tf32 (us) | best vs f32 | best vs tf32 | floor (us) |",
             "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    def arm(a):
        return "-" if a is None else "%.1f (%s)" % (a[1], a[0] or "base")

    for kern, shape, base, best, f32, tf32, floor in comparison(peer, ours):
        def sp(p):
            return "-" if (p is None or best is None) else f"{p / best[1]:.2f}x"
        lines.append(f"| {kern} | {shape} | {arm(base)} | {arm(best)} | {fmt_us(f32)} | "
                     f"{fmt_us(tf32)} | {sp(f32)} | {sp(tf32)} | {fmt_us(floor)} |")
    lines.append("")
    lines.append("best vs f32 / tf32: the peer's time over this project's best arm (> 1: this "
                 "project is faster). '-': not measured in this run.")
    return "\n".join(lines)


# ------------------------------------------------------------------ measurement ---------------
def why_not_measured():
    try:
        import torch
    except Exception as e:  # noqa: BLE001 (any import failure means: no peer)
        return None, f"torch is not importable ({type(e).__name__}: {e})"
    if not torch.cuda.is_available():
        return None, f"torch {torch.__version__} sees no CUDA device"
    return torch, None


class Timer:
    def __init__(self, torch, reps):
        self.torch, self.reps = torch, reps
        props = torch.cuda.get_device_properties(0)
        l2 = getattr(props, "L2_cache_size", 0) or (60 << 20)
        self.flush = torch.ones(2 * l2 // 4, device="cuda", dtype=torch.float32)
        self.gpu = props.name

    # A GPU-side spin queued after each flush (torch.cuda._sleep, in cycles: about 0.5 ms), so
    # that the host has queued the start event, every kernel of the composite and the end event
    # before the GPU reaches the start event. Without it the events also timed the host's Python
    # dispatch whenever that outlasted the flush: on the H200 (fourteenth session) the same
    # torch.bmm of absorb_q at decode read 16.4, 17.5, 31.5 and 37.4 us in four runs.
    SPIN_CYCLES = 1_000_000

    def median(self, fn):
        torch = self.torch
        spin = getattr(torch.cuda, "_sleep", None)
        fn()  # warm (cuBLAS heuristics, allocator)
        torch.cuda.synchronize()
        times = []
        for _ in range(self.reps):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            self.flush.sum()  # read-only: the operands come from HBM
            if spin is not None:
                spin(self.SPIN_CYCLES)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) * 1e3)
        times.sort()
        n = len(times)
        return dict(median_us=times[n // 2], p10_us=times[int(0.1 * n)], p90_us=times[int(0.9 * n)],
                    samples=n, spin=spin is not None)


def peer_ops(torch):
    def absorb(q_nope, wk_b):
        return torch.bmm(q_nope.transpose(0, 1), wk_b)

    def decompress(o_lat, wv_b):
        return torch.bmm(o_lat.transpose(0, 1), wv_b.transpose(1, 2))

    def attn(q_lat, q_pe, cache, scale):
        t, h, r = q_lat.shape
        n = cache.shape[0]
        q = torch.cat([q_lat, q_pe], -1).reshape(t * h, -1) if q_pe is not None else \
            q_lat.reshape(t * h, r)
        kk = cache if q_pe is not None else cache[:, :r]
        s = (q @ kk.T) * scale
        if t > 1:  # query i sees rows 0 .. n - t + i
            i = torch.arange(t, device=s.device).view(t, 1, 1)
            j = torch.arange(n, device=s.device).view(1, 1, n)
            s = s.view(t, h, n).masked_fill(j > n - t + i, float("-inf")).view(t * h, n)
        p = torch.softmax(s, -1)
        return (p @ cache[:, :r]).view(t, h, r)

    def gathered(q_lat, q_pe, cache, idx, scale):
        t, h, r = q_lat.shape
        valid = idx >= 0  # [t, w]
        kv = cache[idx.clamp(min=0)]  # [t, w, r + dr]: each query's list, in its order
        q = torch.cat([q_lat, q_pe], -1) if q_pe is not None else q_lat
        s = torch.bmm(q, kv.transpose(1, 2)) * scale  # [t, h, w]
        s = s.masked_fill(~valid.view(t, 1, -1), float("-inf"))
        p = torch.softmax(s, -1)
        p = p.masked_fill(~valid.any(-1).view(t, 1, 1), 0.0)  # no valid entry: +0, not NaN
        return torch.bmm(p, kv[..., :r])

    def score(q, keys, hw, qk_scale, head_scale, first_pos, pool, chunk=8):
        t, heads, d = q.shape
        npools = keys.shape[0]
        acc = torch.zeros(t, npools, device=q.device, dtype=torch.float32)
        for h0 in range(0, heads, chunk):
            hc = min(chunk, heads - h0)
            s = (q[:, h0:h0 + hc].reshape(t * hc, d) @ keys.T).mul_(qk_scale).relu_()
            w = (hw[:, h0:h0 + hc] * head_scale).reshape(t * hc, 1)
            acc += (s.mul_(w)).view(t, hc, npools).sum(1)
        qrow = first_pos + torch.arange(t, device=q.device).view(t, 1)
        last = (torch.arange(npools, device=q.device).view(1, npools) + 1) * pool - 1
        return acc.masked_fill_(last > qrow, float("-inf"))

    def select(sc, k, pool, width, first_pos, tail):
        t = sc.shape[0]
        _, idx = torch.topk(sc, k, dim=-1)
        idx, _ = torch.sort(idx, dim=-1)
        rows = (idx.unsqueeze(-1) * pool + torch.arange(pool, device=sc.device)).view(t, k * pool)
        out = torch.full((t, width), -1, dtype=torch.int64, device=sc.device)
        out[:, :k * pool] = rows
        if tail and pool > 1:
            q = first_pos + torch.arange(t, device=sc.device).view(t, 1)
            start = (q + 1) // pool * pool
            j = torch.arange(pool - 1, device=sc.device).view(1, pool - 1)
            vals = torch.where(start + j <= q, start + j, torch.full_like(j, -1))
            out[:, k * pool:k * pool + pool - 1] = vals
        return out

    return dict(absorb=absorb, decompress=decompress, attn=attn, gathered=gathered, score=score,
                select=select)


def self_check(torch, ops, golden_dir):
    """The f32 composites against stored golden outputs, inside f32 bounds; returns lines, and
    raises on a failure (then nothing is timed: a peer that computes something else is no peer)."""
    sys.path.insert(0, os.path.join(ROOT, "tools", "golden"))
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "golden"))
    import numpy as np
    import mla_golden as mg
    lines = []

    def dev(a):
        return torch.from_numpy(np.ascontiguousarray(a)).cuda()

    def verdict(rep, what):  # one line a check; a failure stops here, before any timing
        lines.append(f"self-check {'PASS' if rep.passed else 'FAIL'}: {rep.name} ({what})")
        if not rep.passed:
            raise SystemExit(f"torch_peer: self-check failed, nothing timed:\n{rep}")

    torch.backends.cuda.matmul.allow_tf32 = False
    for name in ("glm5_decode", "glm5_verify"):
        case = mg.load_case(name, golden_dir)
        g, x, o = case.geom, case.inputs, case.outputs
        t, h = g("t_q"), g("n_head")

        def dot_bound(spec, u, v, n):  # an f32 dot of n terms in any order: gamma(n+1) sum |u v|
            return mg.gamma_n(n + 1) * np.einsum(spec, np.abs(u.astype(np.float64)),
                                                 np.abs(v.astype(np.float64)))

        q_lat = ops["absorb"](dev(x["q_nope"]), dev(x["wk_b"])).transpose(0, 1).cpu().numpy()
        rep_q = mg.compare(q_lat, o["q_lat"], "dot_f32",
                           dot_bound("thd,hdr->thr", x["q_nope"], x["wk_b"], g("d_nope")),
                           name=f"{name}/q_lat (peer)")
        out = ops["decompress"](dev(o["o_lat"]), dev(x["wv_b"])).transpose(0, 1).cpu().numpy()
        rep_o = mg.compare(out, o["out"], "dot_f32",
                           dot_bound("thr,hvr->thv", o["o_lat"], x["wv_b"], g("kv_rank")),
                           name=f"{name}/out (peer)")
        n = g("t_kv") + 1  # any walk: R = D = N + 1
        o_lat = ops["attn"](dev(o["q_lat"]), dev(o["q_pe"]) if g("d_rope") else None,
                            dev(x["cache"]), float(np.float32(g("scale")))).cpu().numpy()
        rep_a = case.compare("o_lat", o_lat, R=n, D=n)
        for rep in (rep_q, rep_o, rep_a):
            verdict(rep, f"t_q {t}, {h} heads")
    # attn_gathered: a selected list (glm5_kpool_verify's idx) and the edge lists (negative
    # entries, repeats, empty lists: glm5_kpool_gather_edges' gather_idx)
    for name in ("glm5_kpool_verify", "glm5_kpool_gather_edges"):
        case = mg.load_case(name, golden_dir)
        g, x, o = case.geom, case.inputs, case.outputs
        lst = x["gather_idx"] if "gather_idx" in x else o["idx"]
        got = ops["gathered"](dev(x["q_lat"]), dev(x["q_pe"]) if g("d_rope") else None,
                              dev(x["cache"]), dev(lst.astype(np.int64)),
                              float(np.float32(g("scale")))).cpu().numpy()
        n = lst.shape[1] + 1  # any walk over the list's slots: R = D = N + 1
        verdict(case.compare("o_lat_gathered", got, R=n, D=n),
                f"t_q {g('t_q')}, {g('n_head')} heads, {lst.shape[1]} slots")
    return lines


def measure(torch, reps, quick):
    ops = peer_ops(torch)
    timer = Timer(torch, reps)
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(20261201)

    def rnd(*shape, scale=1.0):
        return (torch.rand(*shape, device="cuda", generator=gen) * 2 - 1) * scale

    H, R, DR, DN, DV = (GLM5[k] for k in ("n_head", "kv_rank", "d_rope", "d_nope", "d_v"))
    wk_b, wv_b = rnd(H, DN, R, scale=DN ** -0.5), rnd(H, DV, R, scale=R ** -0.5)
    arms = (("torch f32", False), ("torch tf32", True))

    def add(kernel, shape, arm, fn):
        r = dict(kernel=kernel, shape=shape, arm=arm, bench="torch_peer", gpu=timer.gpu,
                 **timer.median(fn))
        rows.append(r)
        print(f"torch_peer: {kernel} {shape} {arm}: {r['median_us']:.1f} us", file=sys.stderr)

    widths = DENSE_WIDTHS[:1] if quick else DENSE_WIDTHS
    for wname, t, n in widths + ([] if quick else ATTN_EXTRA):
        q_nope, o_lat = rnd(t, H, DN), rnd(t, H, R)
        q_lat, q_pe = rnd(t, H, R), rnd(t, H, DR)
        cache = rnd(n, R + DR)
        for arm, tf32 in arms:
            torch.backends.cuda.matmul.allow_tf32 = tf32
            if (wname, t, n) in DENSE_WIDTHS:
                add("absorb_q", wname, arm, lambda: ops["absorb"](q_nope, wk_b))
                add("decompress_v", wname, arm, lambda: ops["decompress"](o_lat, wv_b))
            add("attn_absorbed", wname, arm,
                lambda: ops["attn"](q_lat, q_pe, cache, GLM5["scale"]))
    torch.backends.cuda.matmul.allow_tf32 = False
    if not quick:
        L = LONGCTX
        npools, fp = L["rows"] // L["pool"], L["rows"] - L["t_q"]
        q, keys, hw = rnd(L["t_q"], L["heads"], L["dim"]), rnd(npools, L["dim"], scale=0.5), \
            rnd(L["t_q"], L["heads"])
        for arm, tf32 in arms:
            torch.backends.cuda.matmul.allow_tf32 = tf32
            add("kpool_score", longctx_shape(L["t_q"]), arm,
                lambda: ops["score"](q, keys, hw, L["qk_scale"], L["head_scale"], fp, L["pool"]))
        torch.backends.cuda.matmul.allow_tf32 = False
        sc = ops["score"](q, keys, hw, L["qk_scale"], L["head_scale"], fp, L["pool"])
        add("kpool_select", longctx_shape(L["t_q"]), "torch f32",
            lambda: ops["select"](sc, L["select_k"], L["pool"], L["width"], fp, L["always_tail"]))
        del sc, q, keys, hw
        G = GATHER
        cache = rnd(G["rows"], R + DR)
        q_lat, q_pe = rnd(G["t_q"], H, R), rnd(G["t_q"], H, DR)
        idx = torch.randint(0, G["rows"], (G["t_q"], G["slots"]), device="cuda", generator=gen,
                            dtype=torch.int64)
        for arm, tf32 in arms:
            torch.backends.cuda.matmul.allow_tf32 = tf32
            for t in (G["t_q"], 1):  # bench_kpool.cu: the t_q 512 chunk, and query 0 alone
                add("attn_gathered", gathered_shape(t), arm,
                    lambda t=t: ops["gathered"](q_lat[:t], q_pe[:t], cache, idx[:t],
                                                GLM5["scale"]))
        torch.backends.cuda.matmul.allow_tf32 = False
    return rows, timer.gpu, ops


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["table"]:
        ap = argparse.ArgumentParser(prog="torch_peer.py table")
        ap.add_argument("--peer", required=True)
        ap.add_argument("--ours", nargs="*", default=[])
        a = ap.parse_args(argv[1:])
        with open(a.peer) as f:
            peer = json.load(f)
        if not peer.get("measured"):
            print(f"peer: not measured ({peer.get('reason')})")
            return 0
        print(table(peer["rows"], load_rows(a.ours)))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=25)
    ap.add_argument("--quick", action="store_true", help="decode only, no k-pool (a smoke run)")
    ap.add_argument("--json")
    ap.add_argument("--ours", nargs="*", default=[], help="this run's bench-*.json")
    ap.add_argument("--self-check", metavar="GOLDEN_DIR")
    a = ap.parse_args(argv)
    torch, reason = why_not_measured()
    result = {"measured": False, "reason": reason, "gpu": None, "rows": []}
    if torch is not None:
        if a.self_check:
            for line in self_check(torch, peer_ops(torch), a.self_check):
                print(line)
        rows, gpu, _ = measure(torch, a.reps, a.quick)
        result = {"measured": True, "reason": f"torch {torch.__version__}", "gpu": gpu,
                  "rows": rows}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    if not result["measured"]:
        print(f"peer: not measured ({reason})")
        return 0
    spun = all(r.get("spin") for r in result["rows"])
    print(f"\n**PyTorch peer** ({result['reason']}, {result['gpu']}): median of {a.reps} "
          "launches, each after a read-only L2 flush, CUDA events"
          + (" (a GPU-side spin queued ahead of each, so host dispatch is not timed)" if spun
             else " (torch.cuda._sleep missing: host dispatch may be timed)") + ".\n")
    print(table(result["rows"], load_rows(a.ours)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
