"""tools/bench/goals_test.py: the goals table (tools/bench/goals.py), on the CPU.

Synthetic runs check the logic: the deciding arms and the best of them, the "door: split *"
pattern, reads over the row's floor, an arm outside the deciding ones never deciding, a goal
without its row "not measured", the peer's own shape only, and a peer that did not run. The ninth
session's H200 files (docs/gpu-runs/2026-12-01-ninth-session) check the real JSON layout end to
end: the values the table prints are recomputed here from the rows themselves."""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import goals  # noqa: E402
from pycheck import main, test  # noqa: E402

RUN9 = os.path.join(HERE, "..", "..", "docs", "gpu-runs", "2026-12-01-ninth-session")


def row(kernel, shape, arm, us, floor=None, read_floor=None):
    return {"kernel": kernel, "shape": shape, "arm": arm, "median_us": us, "floor_us": floor,
            "read_floor_us": read_floor}


def by_goal(gs):
    return {g["goal"]: g for g in gs}


@test
def best_deciding_arm_and_patterns():
    ours = [row("decompress_v", "decode", "split off", 14.2, 8.0, 10.9),
            row("decompress_v", "decode", "door: split 8", 11.9, 8.0, 10.9),
            row("decompress_v", "decode", "sweep: split 4", 9.0, 8.0, 10.9),  # not deciding
            row("absorb_q", "decode", "split off", 10.0, 6.0, 9.2)]
    g = by_goal(goals.evaluate(ours, None))
    d = g["decompress_v"]
    assert d["arm"] == "door: split 8" and d["value"] == 11.9 and d["met"] is True, d
    assert d["floor_us"] == 8.0 and d["read_floor_us"] == 10.9
    assert g["absorb_q"]["met"] is True  # at the limit is met (<=)
    assert g["attention, default path"]["met"] is None  # no row: not measured
    assert g["attention, default path"]["arm"] is None


@test
def the_door_goal_takes_the_faster_door_arm():
    ours = [row("attn_absorbed", "decode", "", 179.8, 18.0, 20.1),
            row("attn_absorbed", "decode", "TC door: tf32", 59.9, 18.0, 20.1),
            row("attn_absorbed", "decode", "TC door: bf16", 33.0, 18.0, 20.1),
            row("attn_absorbed", "decode", "TC door: 3xtf32", 20.0, 18.0, 20.1)]  # not deciding
    g = by_goal(goals.evaluate(ours, None))
    d = g["attention, door arm"]
    assert d["arm"] == "TC door: bf16" and d["us"] == 33.0 and d["met"] is False, d
    assert g["attention, default path"]["arm"] == "" and g["attention, default path"]["us"] == 179.8
    only_tf32 = by_goal(goals.evaluate(ours[:2], None))["attention, door arm"]
    assert only_tf32["arm"] == "TC door: tf32" and only_tf32["us"] == 59.9, only_tf32


@test
def reads_and_other_arms():
    s = goals.SELECT_SHAPE
    ours = [row("kpool_select", s, "radix", 234.5, 128.5),
            row("kpool_select", s, "radix full passes", 100.0, 128.5),  # not a deciding arm
            row("kpool_select", goals.TIES_SHAPE, "radix", 203.9, 128.5)]
    g = by_goal(goals.evaluate(ours, None))
    r = g["radix select"]
    assert abs(r["value"] - 234.5 / 128.5) < 1e-12 and r["met"] is False, r
    assert g["radix select, 8-level ties"]["met"] is True
    md = goals.markdown(goals.evaluate(ours, None), None)
    assert "| radix select | 1.82 reads (radix, 234.5 us) | <= 1.5 reads | missed |" in md, md
    assert "goals: 1 of 6 met (2 measured)." in md, md
    assert "The peer: no file given, not measured in this run." in md


@test
def the_peer():
    ours = [row("attn_absorbed", "decode", "", 198.5, 77.5, 19.8),
            row("kpool_select", goals.TIES_SHAPE, "radix", 203.9, 128.5)]
    peer = {"measured": True, "reason": "torch 2.x", "gpu": "H200",
            "rows": [row("attn_absorbed", "decode", "torch f32", 147.2),
                     row("attn_absorbed", "decode", "torch tf32", 75.8),
                     row("kpool_select", goals.SELECT_SHAPE, "torch f32", 1707.0)]}
    g = by_goal(goals.evaluate(ours, peer))
    assert g["attention, default path"]["peer"] == {"torch f32": 147.2, "torch tf32": 75.8}
    assert g["radix select, 8-level ties"]["peer"] == {}  # the peer has no tie-heavy row
    md = goals.markdown(goals.evaluate(ours, {"measured": False, "reason": "no torch"}),
                        {"measured": False, "reason": "no torch"})
    assert "The peer: not measured (no torch)." in md, md
    assert "| attention, default path | 198.5 us (default) | <= 70 us | missed | 77.5 us | " \
           "19.8 us | - | - |" in md, md


@test
def the_ninth_sessions_h200_files():
    files = [os.path.join(RUN9, f) for f in ("call2-bench-dense.json", "call2-bench-kpool.json")]
    peer = os.path.join(RUN9, "call2-peer-torch.json")
    rows = goals.load_rows(files)
    with tempfile.TemporaryDirectory() as d:
        out_md, out_json = os.path.join(d, "goals.md"), os.path.join(d, "goals.json")
        rc = goals.main(["--ours"] + files + ["--peer", peer, "--md", out_md, "--json", out_json])
        assert rc == 0
        gs = json.load(open(out_json))
        md = open(out_md).read()
    g = by_goal(gs)
    sel = next(r for r in rows if r["kernel"] == "kpool_select" and r["shape"] ==
               goals.SELECT_SHAPE and r["arm"] == "radix")
    assert abs(g["radix select"]["value"] - sel["median_us"] / sel["floor_us"]) < 1e-12
    door = min((r for r in rows if r["kernel"] == "attn_absorbed" and r["shape"] == "decode"
                and r["arm"] in ("TC door: tf32", "TC door: bf16", "TC door: wgmma")),
               key=lambda r: r["median_us"])
    assert g["attention, door arm"]["us"] == door["median_us"]
    dv = [r["median_us"] for r in rows if r["kernel"] == "decompress_v" and r["shape"] == "decode"
          and (r["arm"] == "split off" or r["arm"].startswith("door: split"))]
    assert g["decompress_v"]["us"] == min(dv)
    assert all(x["met"] is not None for x in gs), "every goal has its row in an H200 run"
    assert "goals: " in md and "The peer: measured in this run" in md


@test
def unreadable_input_is_an_error_not_a_crash():
    with tempfile.TemporaryDirectory() as d:
        bad = os.path.join(d, "bad.json")
        open(bad, "w").write("{not json")
        assert goals.main(["--ours", bad]) == 2
        assert goals.main(["--ours", os.path.join(d, "missing.json")]) == 2
        good = os.path.join(d, "good.json")
        json.dump([row("absorb_q", "decode", "split off", 12.5, 6.0, 9.2)], open(good, "w"))
        assert goals.main(["--ours", good, "--peer", bad]) == 0  # the peer: "unreadable"


if __name__ == "__main__":
    sys.exit(main("goals_test"))
