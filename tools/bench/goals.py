#!/usr/bin/env python3
"""tools/bench/goals.py: the performance goals of the issue "Ahead of the PyTorch peer on every
kernel", read from one run's benchmark JSON. Each goal's measured time is shown beside the
peer's, the floor and the read floor, with "met" or "missed". Nothing here is a stored number:
every value comes from the files given.

    goals.py --ours OUT/bench-dense.json OUT/bench-kpool.json [--peer OUT/peer-torch.json]
             [--md FILE] [--json FILE]

run-gpu-tier.sh --bench runs it after the peer. A goal whose row is absent from the run is
"not measured". A peer that did not run (no torch, or no device) shows its reason.

The goals (glm5 decode, t_kv 32768, unless noted):
  attn_absorbed, the default arm                   <= 70 us
  attn_absorbed, the tensor-core door arm          <= 30 us
                 (single-pass operands: tf32, bf16 or bf16 on wgmma, each with its own class)
  decompress_v, the launcher or its split door     <= 12 us
  absorb_q, the launcher or its split door         <= 10 us
  kpool_select radix at the shipped shape          <= 1.5 reads of the score plane
  kpool_select radix, 8-level ties                 <= 3 reads
"Reads" is the median over one read of the score plane at the run's copy bandwidth (the row's
floor_us, as bench_kpool writes it).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_peer import load_rows  # noqa: E402  (the benchmark JSON reader; torch not imported)

SELECT_SHAPE = "longctx_kpool t_q 512"
TIES_SHAPE = SELECT_SHAPE + ", 8-level ties"

# (goal, kernel, shape, arms: the deciding arms (the best of them counts), limit, unit: "us" or
#  "reads")
GOALS = [
    ("attention, default path", "attn_absorbed", "decode", [""], 70.0, "us"),
    ("attention, door arm", "attn_absorbed", "decode",
     ["TC door: tf32", "TC door: bf16", "TC door: wgmma"], 30.0, "us"),
    ("decompress_v", "decompress_v", "decode", ["split off", "door: split *"], 12.0, "us"),
    ("absorb_q", "absorb_q", "decode", ["split off", "door: split *"], 10.0, "us"),
    ("radix select", "kpool_select", SELECT_SHAPE, ["radix"], 1.5, "reads"),
    ("radix select, 8-level ties", "kpool_select", TIES_SHAPE, ["radix"], 3.0, "reads"),
]


def arm_matches(arm, pattern):
    if pattern.endswith("*"):
        return arm.startswith(pattern[:-1])
    return arm == pattern


def value(row, unit):
    if unit == "reads":
        f = row.get("floor_us")
        return row["median_us"] / f if f else None
    return row["median_us"]


def evaluate(ours, peer_doc):
    peer_rows = peer_doc.get("rows", []) if peer_doc and peer_doc.get("measured") else []
    out = []
    for goal, kernel, shape, arms, limit, unit in GOALS:
        mine = [r for r in ours if r["kernel"] == kernel and r["shape"] == shape]
        deciding = [r for r in mine if any(arm_matches(r["arm"], a) for a in arms)]
        best = min(deciding, key=lambda r: r["median_us"]) if deciding else None
        e = {"goal": goal, "kernel": kernel, "shape": shape, "limit": limit, "unit": unit,
             "arm": None, "value": None, "us": None, "met": None, "floor_us": None,
             "read_floor_us": None, "peer": {}}
        if best is not None:
            e.update(arm=best["arm"], us=best["median_us"], value=value(best, unit),
                     floor_us=best.get("floor_us"), read_floor_us=best.get("read_floor_us"))
            e["met"] = e["value"] is not None and e["value"] <= limit
        for r in peer_rows:  # the peer's own rows at the same shape (it has no 8-level ties)
            if r["kernel"] == kernel and r["shape"] == shape:
                e["peer"][r["arm"]] = r["median_us"]
        out.append(e)
    return out


def fmt(x, unit="us"):
    if x is None:
        return "-"
    return f"{x:.2f} reads" if unit == "reads" else f"{x:.1f} us"


def markdown(goals, peer_doc):
    lines = ["| goal | this project (arm) | goal | met | floor | read floor | torch f32 | "
             "torch tf32 |",
             "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |"]
    for g in goals:
        unit = g["unit"]
        mine = ("not measured" if g["arm"] is None else
                f"{fmt(g['value'], unit)} ({g['arm'] or 'default'}"
                + (f", {g['us']:.1f} us)" if unit == "reads" else ")"))
        met = "not measured" if g["met"] is None else ("met" if g["met"] else "missed")
        limit = f"<= {g['limit']:g} reads" if unit == "reads" else f"<= {g['limit']:g} us"
        lines.append(f"| {g['goal']} | {mine} | {limit} | {met} | {fmt(g['floor_us'])} | "
                     f"{fmt(g['read_floor_us'])} | {fmt(g['peer'].get('torch f32'))} | "
                     f"{fmt(g['peer'].get('torch tf32'))} |")
    lines.append("")
    if not peer_doc:
        lines.append("The peer: no file given, not measured in this run.")
    elif not peer_doc.get("measured"):
        lines.append(f"The peer: not measured ({peer_doc.get('reason', 'no reason given')}).")
    else:
        lines.append(f"The peer: measured in this run ({peer_doc.get('reason', '')}, "
                     f"{peer_doc.get('gpu', '')}).")
    n_met = sum(1 for g in goals if g["met"])
    n_meas = sum(1 for g in goals if g["met"] is not None)
    lines.append(f"goals: {n_met} of {len(goals)} met ({n_meas} measured).")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ours", nargs="+", required=True, help="this run's bench-*.json")
    ap.add_argument("--peer", help="this run's peer-torch.json (absent: not measured)")
    ap.add_argument("--md", help="write the table here too")
    ap.add_argument("--json", help="write the goals as JSON here")
    a = ap.parse_args(argv)
    try:
        ours = load_rows(a.ours)
    except (OSError, ValueError, KeyError) as e:
        print(f"goals: cannot read the benchmark JSON: {e}", file=sys.stderr)
        return 2
    peer_doc = None
    if a.peer:
        try:
            with open(a.peer) as f:
                peer_doc = json.load(f)
        except (OSError, ValueError) as e:
            peer_doc = {"measured": False, "reason": f"peer file unreadable: {e}"}
    goals = evaluate(ours, peer_doc)
    md = markdown(goals, peer_doc)
    print(md)
    if a.md:
        with open(a.md, "w") as f:
            f.write(md + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(goals, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
