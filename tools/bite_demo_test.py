"""tools/bite_demo_test.py: tools/bite_demo.sh's verdict table on planted logs (no GPU).

  - a bite that FAILs its new case and PASSes every old case with a stage among its checks is
    as-expected; old cases without such a stage (glm5_rope_maxpos for an attention bite) are
    not counted, and a suite with none of the bite's checks is not needed;
  - an old case that was not reached (NOTRUN) or FAILed makes the row NOT-as-expected, exit 1;
  - a new case that passes makes the row NOT-as-expected;
  - other new cases that FAIL are listed.
"""
import json
import os
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from pycheck import main, test  # noqa: E402

TOOL = os.path.join(HERE, "bite_demo.sh")
MANIFEST = {"cases": [
    {"name": n, "outputs": {f"o{i}": {"stage": st} for i, st in enumerate(stages)}}
    for n, stages in [
        ("glm5_decode", ["split_latent", "attn_absorbed"]),
        ("glm5_verify", ["split_latent", "attn_absorbed"]),
        ("glm5_prefill", ["split_latent", "attn_absorbed"]),
        ("glm5_rope_maxpos", ["rope"]),
        ("glm5_next_decode", ["split_latent", "attn_absorbed"]),
        ("glm5_next_verify", ["split_latent", "attn_absorbed"]),
        ("glm5_kpool_decode", ["select", "attn_gathered"]),
        ("glm5_kpool_verify", ["select", "attn_gathered"]),
        ("glm5_next_kpool_decode", ["select", "attn_gathered"]),
        ("glm5_next_kpool_verify", ["select", "attn_gathered"]),
        ("glm5_next_kpool_ring", ["select", "attn_gathered"]),
        ("glm5_peaked_verify", ["split_latent", "attn_absorbed"]),
        ("glm5_smallint_verify", ["split_latent", "attn_absorbed"]),
        ("glm5_next_kpool_pool64", ["select", "attn_gathered"]),
    ]]}
DENSE_OLD = ["glm5_decode", "glm5_verify", "glm5_prefill", "glm5_next_decode", "glm5_next_verify"]
KPOOL_OLD = ["glm5_kpool_decode", "glm5_kpool_verify", "glm5_next_kpool_decode",
             "glm5_next_kpool_verify", "glm5_next_kpool_ring"]


def setup(t, logs):
    gold, binp, logd = (os.path.join(t, d) for d in ("golden", "bin", "logs"))
    for d in (gold, binp, logd):
        os.makedirs(d, exist_ok=True)
    with open(os.path.join(gold, "manifest.json"), "w") as f:
        json.dump(MANIFEST, f)
    for b in ("ATTN_NO_MAX", "SELECT_TAIL_WARP"):
        for s in ("dense", "kpool"):
            p = os.path.join(binp, f"{s}_gpu_goldens_test__{b}")
            open(p, "w").close()
            os.chmod(p, stat.S_IRWXU)
    for name, lines in logs.items():
        with open(os.path.join(logd, name), "w") as f:
            f.write("\n".join(lines) + "\n")
    return gold, binp, logd


def table(t, logs, *bites):
    gold, binp, logd = setup(t, logs)
    p = subprocess.run(["bash", TOOL, "table", binp, logd, *bites], capture_output=True,
                       text=True, env=dict(os.environ, MLA_GOLDEN_DIR=gold))
    rows = {ln.split(" | ")[0]: ln for ln in p.stdout.splitlines() if " | " in ln}
    return p.returncode, rows, p.stdout + p.stderr


def lines(suite, cases, check, verdict="PASS"):
    return [f"\x1b[0;32m[{verdict}] {suite}::{c}__{check}: (0.10s)" for c in cases]


@test
def an_attention_bite_as_expected():
    with tempfile.TemporaryDirectory() as t:
        logs = {"ATTN_NO_MAX__dense_gpu_goldens_test.log":
                lines("dense_gpu", DENSE_OLD, "attn_absorbed")
                + lines("dense_gpu", ["glm5_peaked_verify", "glm5_smallint_verify"],
                        "attn_absorbed", "FAIL"),
                "ATTN_NO_MAX__kpool_gpu_goldens_test.log":
                lines("kpool_gpu", KPOOL_OLD + ["glm5_next_kpool_pool64"], "attn_gathered")}
        rc, rows, out = table(t, logs, "ATTN_NO_MAX")
        r = rows["ATTN_NO_MAX"]
        assert rc == 0 and r.endswith("| as-expected"), out
        assert "expected FAIL got FAIL" in r and "got PASS (10/10 cases)" in r, r  # no rope_maxpos
        assert "other new cases failing: glm5_smallint_verify" in r, r


@test
def an_unreached_or_failing_old_case_is_not_as_expected():
    with tempfile.TemporaryDirectory() as t:
        logs = {"ATTN_NO_MAX__dense_gpu_goldens_test.log":
                lines("dense_gpu", DENSE_OLD[1:], "attn_absorbed")
                + lines("dense_gpu", ["glm5_peaked_verify"], "attn_absorbed", "FAIL"),
                "ATTN_NO_MAX__kpool_gpu_goldens_test.log":
                lines("kpool_gpu", KPOOL_OLD[1:], "attn_gathered")
                + lines("kpool_gpu", KPOOL_OLD[:1], "attn_gathered", "FAIL")}
        rc, rows, out = table(t, logs, "ATTN_NO_MAX")
        r = rows["ATTN_NO_MAX"]
        assert rc == 1 and r.endswith("| NOT-as-expected"), out
        assert "glm5_decode:NOTRUN" in r and "glm5_kpool_decode:FAIL" in r, r


@test
def a_select_bite_needs_only_its_suite_and_must_fail_its_case():
    with tempfile.TemporaryDirectory() as t:
        logs = {"SELECT_TAIL_WARP__kpool_gpu_goldens_test.log":
                lines("kpool_gpu", KPOOL_OLD, "select")
                + lines("kpool_gpu", ["glm5_next_kpool_pool64"], "select", "FAIL")}
        rc, rows, out = table(t, logs, "SELECT_TAIL_WARP")
        assert rc == 0 and "got PASS (5/5 cases)" in rows["SELECT_TAIL_WARP"], out
        logs["SELECT_TAIL_WARP__kpool_gpu_goldens_test.log"] = lines(
            "kpool_gpu", KPOOL_OLD + ["glm5_next_kpool_pool64"], "select")
        rc, rows, out = table(t, logs, "SELECT_TAIL_WARP")
        r = rows["SELECT_TAIL_WARP"]
        assert rc == 1 and "expected FAIL got PASS" in r and r.endswith("NOT-as-expected"), out


if __name__ == "__main__":
    sys.exit(main("bite_demo_test"))
