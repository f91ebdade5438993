#!/usr/bin/env python3
"""tools/shrink.py: reduce a failing case to the smallest geometry and the simplest inputs that
still fail the same way (docs/shrink.md): a golden-case check, or a fuzz reproducer.

  shrink.py --binary bin/dense_gpu_goldens_test --check attn_absorbed --base glm5_decode
            [--geom FIELD=VALUE ...] [--seed N] [--golden DIR] [--timeout S] [--out DIR]
            [--name NAME]

The check runs as the suite's custom case (<suite>/custom__<check>, tests/lib/case.h:
$MLA_CUSTOM_CASE = {"base", "geom", "seed"}): the base case's stages at the given geometry,
computed in memory, the GPU against the oracle. The first run must fail; its signature (the
tensor the comparator names, or a crash / timeout) is what every reduction must keep. Then, to a
fixpoint, each geometry field of the family (dense: t_q, t_kv, n_head, kv_rank, d_rope, d_nope,
d_v; k-pool: t_q, t_kv, n_head, idx_heads, idx_dim, pool, n_pools, select_k, width, state_rows,
first_pos) is reduced to the smallest value that still fails with the same signature: its floor
first, then a binary search below the current value (d_rope, kv_rank, idx_dim stay even); an
invalid geometry fails differently (a contract code, an oracle error) and counts as not failing.
Then the inputs: the small-integer fill (few distinct values), then the seed 1.

Writes OUT/<name>.json (the regression input: base, geom, seed, check, signature), prints the
one-line description (every field before -> after) and the replay command.

  shrink.py --repro FILE --binary bin/<target>_fuzzer [--timeout S] [--out DIR] [--name NAME]
            [--max-runs N]

A fuzz reproducer, shrunk by the values it draws. The fuzzer (libFuzzer, or the regression
driver: both run one input given as a file) runs the input with $FUZZ_DRAW_LOG set
(fuzz/fuzz_helpers.h: one line per fuzz_range / fuzz_u32 draw with its place in the input, its
range and its value, and the decoded case line). The first run must fail; its signature is the
FUZZ_ASSERT condition (without the line), the tensor a testbed comparison names, the sanitizer's
kind of crash, a signal, or a timeout. Then, to a fixpoint: each logged draw in order goes to its
range's floor, else to the smallest value a binary search finds that still fails the same way
(the draw's bytes rewritten so the producer returns exactly that value: high word 0, low word
value - lo, in the producer's byte order; seeds go to 0 the same way), the draw log re-read after
every accepted change (a conditional draw moves the others); then the front (bulk) bytes are
dropped (all, then halves, quarters, ...) and zeroed, and their most common values replaced by 0.
Writes OUT/<name>.bin (the minimal input) and OUT/<name>.json ({"kind": "fuzz", target,
signature, description, input, replay}), prints the description (the case line's fields before
-> after) and the replay commands (the bundle's fuzzer, and bazel run //fuzz:<target>_regression).

  shrink.py --replay CASE.json [--bin DIR] --xml FILE
      run a committed regression case: a golden one (tests/regressions/) as its suite's custom
      case, the JUnit report kept to that test and named regression_<name> (run-gpu-tier.sh's
      step); a fuzz one ("kind": "fuzz") as DIR/<target>_fuzzer on its input (the path relative
      to the JSON), with a one-test JUnit report of its own; exits with the binary's status.

Exit 0 when a failing case was reduced (or was already minimal), 1 when the first run did not
fail, 2 on bad arguments.
"""
import argparse
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

DENSE = ["t_q", "t_kv", "n_head", "kv_rank", "d_rope", "d_nope", "d_v"]
KPOOL = ["t_q", "t_kv", "n_head", "idx_heads", "idx_dim", "pool", "n_pools", "select_k", "width",
         "state_rows", "first_pos"]
FLOOR = {"d_rope": 0, "first_pos": 0, "state_rows": 0}
EVEN = {"d_rope", "kv_rank", "idx_dim"}


def suite_of(binary):
    b = os.path.basename(binary)
    return "dense_gpu" if b.startswith("dense") else "kpool_gpu" if b.startswith("kpool") else None


def run_check(a, geom, seed):
    """(signature, seconds): None when the check passed (or skipped), else the failure's kind."""
    desc = {"base": a.base, "geom": geom, "seed": seed}
    env = dict(os.environ, MLA_CUSTOM_CASE=json.dumps(desc, sort_keys=True))
    if a.golden:
        env["MLA_GOLDEN_DIR"] = a.golden
    t0 = time.time()
    try:
        p = subprocess.run([a.binary, "--verbose", f"--filter={a.suite}/custom__{a.check}"],
                           env=env, capture_output=True, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.time() - t0
    out = re.sub(r"\x1b\[[0-9;]*m", "", p.stdout + p.stderr)
    dt = time.time() - t0
    if p.returncode == 0 and "Tested: 0" in out:
        return "skipped", dt
    if p.returncode == 0:
        return None, dt
    return golden_signature(out, a.check, p.returncode), dt


def golden_signature(out, check, rc):
    """The failure's kind from a failing run's output, read from this check's own lines only:
    Criterion --verbose also lists every filtered-out test ("[SKIP] ...: Test is disabled"),
    which says nothing about this failure. Numbers in a message are replaced by N, so a count
    that scales with the geometry ("left 17 idx entries") keeps the signature."""
    lines = [ln for ln in out.splitlines()
             if "Test is disabled" not in ln and "reproducer written" not in ln]
    text = "\n".join(lines)
    m = re.search(r"FAIL: case custom, tensor (\w+)", text)
    if m:
        return f"tensor {m.group(1)}"
    # int32 outputs (testbed.c compare_i32): "case custom, tensor idx [3 x 9] int32: 2
    # element(s) differ (radix vs oracle); ..." -- which pair disagreed is part of the failure
    m = re.search(r"case custom, tensor (\w+) \[[^\]]*\] int32: \d+ element\(s\) differ "
                  r"\(([^)]*)\)", text)
    if m:
        return f"tensor {m.group(1)} ({m.group(2)})"
    if re.search(r"CRASH|signal|crash", text):
        return "crash"
    own = re.compile(rf"custom__{re.escape(check)}\b:?\s*(.*)")
    for ln in lines:
        m = own.search(ln)
        msg = m.group(1).strip() if m else ""
        if msg and not re.fullmatch(r"\(\d+(\.\d+)?s\)", msg):  # not the "(0.10s)" of [FAIL]
            return "other: " + re.sub(r"\d+", "N", msg)[:80]
    return f"other: exit {rc}"


def shrink_field(a, geom, seed, sig, f, log):
    """The smallest value of field f that still fails with sig (the others fixed): the floor
    first, then a binary search between it and the current value, whose upper end always fails
    (so a non-monotone field still ends on a failing value). Even fields step by 2. Returns
    (value, runs)."""
    lo, v = FLOOR.get(f, 1), int(geom[f])
    step = 2 if f in EVEN else 1
    if f in EVEN and lo % 2:
        lo += 1
    runs = 0

    def fails(x):
        nonlocal runs
        s, dt = run_check(a, dict(geom, **{f: x}), seed)
        runs += 1
        log(f"shrink: {f} {v} -> {x}: {s or 'passes'}{' (same failure)' if s == sig else ''}"
            f" ({dt:.1f} s)")
        return s == sig

    if v <= lo:
        return v, runs
    if fails(lo):
        return lo, runs
    bad_lo, hi = lo, v  # bad_lo does not fail (same way), hi fails
    while (hi - bad_lo) > step and runs < a.max_runs:
        mid = bad_lo + ((hi - bad_lo) // (2 * step)) * step
        if mid <= bad_lo:
            mid = bad_lo + step
        if mid >= hi:
            break
        if fails(mid):
            hi = mid
        else:
            bad_lo = mid
    return hi, runs


def base_geometry(golden, base):
    path = os.path.join(golden, "manifest.json")
    with open(path) as f:
        m = json.load(f)
    for c in m["cases"]:
        if c["name"] == base:
            return {k: v for k, v in c["geometry"].items()}, c.get("seed")
    raise SystemExit(f"shrink: case {base} is not in {path}")


def replay(path, bin_dir, xml):
    """A committed regression case (tests/regressions/*.json, written below): its suite binary
    on the custom case, Criterion's JUnit report kept to that one test and named
    regression_<name> (so a skip without a GPU counts as skipped); a fuzz case ("kind": "fuzz")
    through replay_fuzz. Returns the binary's exit."""
    import xml.etree.ElementTree as ET
    with open(path) as f:
        r = json.load(f)
    if r.get("kind") == "fuzz":
        return replay_fuzz(path, r, bin_dir, xml)
    name = "regression_" + os.path.basename(path)[:-len(".json")]
    keep = f"custom__{r['check']}"
    env = dict(os.environ, MLA_XML_OUTPUT=xml, MLA_CUSTOM_CASE=json.dumps(
        {"base": r["base"], "geom": r["geom"], "seed": r["seed"]}, sort_keys=True))
    rc = subprocess.run([os.path.join(bin_dir, f"{r['suite']}_goldens_test"), "--verbose",
                         f"--filter={r['suite']}/{keep}"], env=env).returncode
    if os.path.exists(xml) and os.path.getsize(xml):
        tree = ET.parse(xml)
        for ts in tree.getroot().iter("testsuite"):
            ts.set("name", name)
            for tc in ts.findall("testcase"):
                if tc.get("name") != keep:
                    ts.remove(tc)
            cases = ts.findall("testcase")
            ts.set("tests", str(len(cases)))
            for k, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
                ts.set(k, str(sum(tc.find(tag) is not None for tc in cases)))
            ts.set("disabled", "0")
        tree.write(xml, encoding="utf-8", xml_declaration=True)
    return rc


# ---- fuzz reproducers (--repro) -------------------------------------------------------------
ASAN_OPTIONS = "protect_shadow_gap=0:detect_leaks=0"  # CUDA under ASan (run-gpu-tier.sh's)
WIDTH = {"range": 8, "u32": 4}  # the bytes a draw reads when the input has them


def fuzz_env(tmp, log=None):
    """The fuzzer's environment: ASan's options (the caller's, if set), the reproducers a
    failing input writes kept in tmp, and the draw log when asked for."""
    env = dict(os.environ, FUZZ_REPRO_DIR=tmp)
    env.setdefault("ASAN_OPTIONS", ASAN_OPTIONS)
    env.pop("FUZZ_DRAW_LOG", None)
    if log:
        env["FUZZ_DRAW_LOG"] = log
    return env


def masked(text):
    """A message without its numbers (sizes, indices, positions), so it names the failure and
    not the geometry it happened at."""
    return re.sub(r"\d+", "N", text.strip())[:160]


def fuzz_signature(rc, out):
    """None when the input passed, else its failure: the FUZZ_ASSERT condition (without the line
    number), the tensor a testbed comparison names, a CUDA failure, the sanitizer's kind of
    crash, libFuzzer's, a signal, or the exit status."""
    if rc == 0:
        return None
    m = re.search(r"FUZZ_ASSERT failed: (.*)", out)  # FUZZ_ASSERT(_MSG) and FUZZ_TB_ASSERT
    if m:
        return "FUZZ_ASSERT failed: " + m.group(1).strip()
    m = re.search(r"FUZZ testbed failure:\n[^:\n]*: (.*)", out)  # fuzz_gpu.c's sink
    if m:
        body = m.group(1)
        t = re.search(r"tensor (\S+) \[[^\]]*\] int32: \d+ element\(s\) differ \((.+?) vs (.+?)\)",
                      body) or re.match(r"(\S+): (.+?) vs (.+?) \(", body)
        return f"tensor {t.group(1)} ({t.group(2)} vs {t.group(3)})" if t else \
            "testbed: " + masked(body)
    m = re.search(r"CUDA failure (\d+) \(([^)]*)\) in `([^`]*)`", out)  # gpu_util.c
    if m:
        return f"CUDA failure {m.group(1)} ({m.group(2)}) in `{m.group(3)}`"
    m = re.search(r"ERROR: AddressSanitizer: ([\w-]+)", out)
    if m:
        return f"crash AddressSanitizer {m.group(1)}"
    m = re.search(r"runtime error: (.*)", out)
    if m:
        return "crash UBSan " + masked(m.group(1))
    m = re.search(r"ERROR: libFuzzer: ([\w -]+)", out)
    if m:
        kind = m.group(1).strip()
        return "timeout" if kind.startswith("timeout") else f"crash libFuzzer {kind}"
    if rc < 0:
        try:
            return "crash " + signal.Signals(-rc).name
        except ValueError:
            return f"crash signal {-rc}"
    return f"other: exit {rc}"


def parse_draw_log(text):
    """The last input of a draw log (fuzz/fuzz_helpers.h): {size, target, draws, case}; None
    when the log names no input (a fuzzer built before the draw log). A line cut short (a
    process killed while writing it) is left out."""
    cur = None
    for line in text.splitlines():
        w = line.split(" ", 1)
        try:
            if w[0] == "input":
                size, _, target = w[1].partition(" ")
                cur = {"size": int(size), "target": target.strip(), "draws": [], "case": None}
            elif cur is None:
                continue
            elif w[0] == "draw":
                kind, off, n, lo, hi, value = w[1].split()
                if kind in WIDTH:
                    cur["draws"].append({"kind": kind, "off": int(off), "n": int(n),
                                         "lo": int(lo), "hi": int(hi), "value": int(value)})
            elif w[0] == "case":
                cur["case"] = w[1] if len(w) > 1 else ""
        except (IndexError, ValueError):
            continue
    return cur


def set_draw(data, d, value):
    """data with the draw d (a draw log entry of data) rewritten to return value: v = value - lo
    as the producer reads it from the end (fuzz_range: the first 32-bit word the high one, each
    word's top byte last in the input; fuzz_u32: one word). A draw that ran out of input gets
    zero bytes in front first (it read fewer than its width, and nothing was left after it)."""
    width, x = WIDTH[d["kind"]], value - d["lo"]
    buf, off = bytearray(data), d["off"]
    if d["n"] < width:
        buf[0:0] = bytes(width - d["n"])
        off += width - d["n"]
    words = [(x >> 32) & 0xFFFFFFFF, x & 0xFFFFFFFF] if width == 8 else [x & 0xFFFFFFFF]
    for w in words:
        for shift in (24, 16, 8, 0):
            off -= 1
            buf[off] = (w >> shift) & 0xFF
    return bytes(buf)


class FuzzShrink:
    """The state of a fuzz shrink: the input, its draw log, the signature, the runs."""

    def __init__(self, a, tmp):
        self.a, self.tmp, self.runs, self.seen = a, tmp, 0, {}
        self.data, self.log, self.sig = None, None, None

    def run(self, data):
        """(signature, draw log, output, seconds) of one input; a repeated input is not rerun."""
        key = hashlib.sha1(data).hexdigest()
        if key in self.seen:
            return self.seen[key] + (0.0,)
        cand, log = os.path.join(self.tmp, "input.bin"), os.path.join(self.tmp, "draws.log")
        with open(cand, "wb") as f:
            f.write(data)
        if os.path.exists(log):
            os.remove(log)
        t0 = time.time()
        self.runs += 1
        try:
            p = subprocess.run([self.a.binary, f"-artifact_prefix={self.tmp}/", cand],
                               env=fuzz_env(self.tmp, log), capture_output=True, text=True,
                               errors="replace", timeout=self.a.timeout)
            out = p.stdout + p.stderr
            sig = fuzz_signature(p.returncode, out)
        except subprocess.TimeoutExpired:
            out, sig = "", "timeout"
        try:
            with open(log) as f:
                parsed = parse_draw_log(f.read())
        except OSError:
            parsed = None
        self.seen[key] = (sig, parsed, out)
        return sig, parsed, out, time.time() - t0

    def front(self):
        """The front (bulk) bytes: those before every draw's bytes."""
        return min([d["off"] - d["n"] for d in self.log["draws"]] + [len(self.data)])

    def attempt(self, data, what):
        """Keeps data when it fails with the signature (its draw log read again)."""
        if data == self.data or self.runs >= self.a.max_runs:
            return False
        sig, log, _, dt = self.run(data)
        same = sig == self.sig and log is not None
        print(f"shrink: {what}: {sig or 'passes'}{' (same failure)' if same else ''}"
              f" ({dt:.1f} s)", flush=True)
        if same:
            self.data, self.log = data, log
        return same

    def shrink_draw(self, i, again=False):
        """Draw i to its floor, else the smallest value a binary search finds between the floor
        and the current value (which always fails). Again (a later pass, after other changes):
        the search only when the value just below still fails. Returns whether it changed."""
        d0 = self.log["draws"][i]
        if d0["value"] <= d0["lo"]:
            return False
        label = f"draw {i} ({d0['kind']} {d0['lo']}..{d0['hi']})"

        def fails(v):
            d = self.log["draws"][i] if i < len(self.log["draws"]) else None
            if not d or (d["kind"], d["lo"], d["hi"]) != (d0["kind"], d0["lo"], d0["hi"]):
                return False  # the layout moved under an accepted change
            return self.attempt(set_draw(self.data, d, v), f"{label} {d['value']} -> {v}")

        if fails(d0["lo"]):
            return True
        bad, good = d0["lo"], d0["value"]  # bad does not fail (the same way), good does
        if again and good - 1 > bad:
            if not fails(good - 1):
                return False
            good -= 1
        while good - bad > 1 and self.runs < self.a.max_runs:
            mid = (bad + good) // 2
            if fails(mid):
                good = mid
            else:
                bad = mid
        return good != d0["value"]

    def shrink_front(self):
        """Drops the front bytes (all, then halves, quarters, ... down to a 32nd of them), then
        zeroes them the same way, then replaces their most common values by 0."""
        changed = False
        for mode in ("drop", "zero"):
            f = self.front()
            if f == 0 or (mode == "zero" and not any(self.data[:f])):
                continue
            chunk = f
            while chunk >= 1 and chunk * 32 >= f and self.runs < self.a.max_runs:
                i = 0
                while i < self.front() and self.runs < self.a.max_runs:
                    j = min(i + chunk, self.front())
                    if mode == "zero" and not any(self.data[i:j]):
                        i = j
                        continue
                    cand = self.data[:i] + (b"" if mode == "drop" else bytes(j - i)) + \
                        self.data[j:]
                    if self.attempt(cand, f"front: {mode} bytes {i}..{j - 1} of {self.front()}"):
                        changed = True
                        if mode == "zero":
                            i = j
                    else:
                        i = j
                if chunk == 1:
                    break
                chunk = (chunk + 1) // 2
        f = self.front()
        counts = {}
        for b in self.data[:f]:
            if b:
                counts[b] = counts.get(b, 0) + 1
        for b in sorted(counts, key=lambda k: (-counts[k], k))[:8]:
            cand = bytes(0 if c == b else c for c in self.data[:f]) + self.data[f:]
            changed |= self.attempt(cand, f"front: value 0x{b:02x} -> 0 ({counts[b]} bytes)")
        return changed


def case_fields(line):
    """A case line as (key, value) pairs when it reads "key value key value ...", else None."""
    w = (line or "").split()
    if not w or len(w) % 2 or not all(re.fullmatch(r"[A-Za-z_]\w*", k) for k in w[::2]):
        return None
    return list(zip(w[::2], w[1::2]))


def fuzz_description(target, sig, before, after, n0, n1):
    """The one line: the case's fields before -> after (or the case lines, or the draws)."""
    fb, fa = case_fields(before["case"]), case_fields(after["case"])
    if fb and fa and [k for k, _ in fb] == [k for k, _ in fa]:
        diff = ", ".join(f"{k} {x} -> {y}" for (k, x), (_, y) in zip(fb, fa) if x != y)
    elif before["case"] is not None and after["case"] is not None:
        diff = f"{before['case']} -> {after['case']}" if before["case"] != after["case"] else ""
    else:
        db, da = before["draws"], after["draws"]
        diff = ", ".join(f"draw {i} {x['value']} -> {y['value']}" for i, (x, y) in
                         enumerate(zip(db, da)) if x["value"] != y["value"])
        if len(db) != len(da):
            diff += f"{', ' if diff else ''}draws {len(db)} -> {len(da)}"
    size = f"input {n0} -> {n1} bytes"
    return f"{target} ({sig}): {diff + '; ' if diff else ''}{size}"


def shrink_fuzz(a):
    """shrink.py --repro FILE --binary FUZZER: see the module's docstring."""
    try:
        with open(a.repro, "rb") as f:
            data = f.read()
    except OSError as e:
        print(f"shrink: cannot read {a.repro}: {e}", file=sys.stderr)
        return 2
    if not os.access(a.binary, os.X_OK):
        print(f"shrink: {a.binary} is not an executable fuzzer", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="shrink-") as tmp:
        st = FuzzShrink(a, tmp)
        sig, log, out, dt = st.run(data)
        print(f"shrink: start {a.repro} ({len(data)} bytes): {sig or 'passes'} ({dt:.1f} s)",
              flush=True)
        if not sig:
            print("shrink: the reproducer does not fail; nothing to shrink", file=sys.stderr)
            return 1
        if log is None:
            print("shrink: the fuzzer wrote no draw log ($FUZZ_DRAW_LOG): rebuild it with this "
                  "tree's fuzz/fuzz_entry.c", file=sys.stderr)
            return 2
        if log["case"] is not None:
            print(f"shrink: case {log['case']}", flush=True)
        st.data, st.log, st.sig = data, log, sig
        start = log
        changed, passes = True, 0
        while changed and st.runs < a.max_runs:
            changed = False
            i = 0
            while i < len(st.log["draws"]) and st.runs < a.max_runs:
                changed |= st.shrink_draw(i, again=passes > 0)
                i += 1
            changed |= st.shrink_front()
            passes += 1
        if st.runs >= a.max_runs:
            print(f"shrink: stopped at --max-runs {a.max_runs}", flush=True)
        # The minimal input once more, not from the cache: a flaky failure shows here.
        st.seen.clear()
        sig_again = st.run(st.data)[0]
        runs = st.runs
        if sig_again != sig:
            print(f"shrink: warning: the minimal input failed as `{sig_again or 'passes'}` on a "
                  "second run (flaky?)", file=sys.stderr)
        target = st.log["target"] or re.sub(r"_(fuzzer|regression)$", "",
                                            os.path.basename(a.binary))
        name = a.name or f"{target}__min_{hashlib.sha1(st.data).hexdigest()[:10]}"
        os.makedirs(a.out, exist_ok=True)
        bin_path = os.path.join(a.out, name + ".bin")
        with open(bin_path, "wb") as f:
            f.write(st.data)
        replay_cmd = f"ASAN_OPTIONS={ASAN_OPTIONS} bin/{target}_fuzzer {name}.bin"
        desc = {"kind": "fuzz", "target": target, "signature": sig, "input": name + ".bin",
                "description": fuzz_description(target, sig, start, st.log, len(data),
                                                len(st.data)),
                "case_before": start["case"], "case_after": st.log["case"],
                "replay": replay_cmd, "runs": runs}
        path = os.path.join(a.out, name + ".json")
        with open(path, "w") as f:
            json.dump(desc, f, indent=1, sort_keys=True)
            f.write("\n")
    print(f"shrink: {desc['description']} ({runs} runs)")
    print(f"shrink: wrote {bin_path} and {path}")
    print(f"shrink: replay: ASAN_OPTIONS={ASAN_OPTIONS} {a.binary} {bin_path}")
    print(f"shrink: replay: bazel run //fuzz:{target}_regression -- {os.path.abspath(bin_path)}")
    print(f"shrink: commit: cp {bin_path} fuzz/corpus/{target}/{name}")
    return 0


def replay_fuzz(path, r, bin_dir, xml):
    """A fuzz regression case: DIR/<target>_fuzzer on its input, a one-test JUnit report
    (testsuite regression_<name>, the failure with the output's tail). Returns the exit."""
    import xml.etree.ElementTree as ET
    name = "regression_" + os.path.basename(path)[:-len(".json")]
    binary = os.path.join(bin_dir, f"{r['target']}_fuzzer")
    inp = os.path.join(os.path.dirname(os.path.abspath(path)), r["input"])
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="replay-") as tmp:
        try:
            p = subprocess.run([binary, f"-artifact_prefix={tmp}/", inp], env=fuzz_env(tmp),
                               capture_output=True, text=True, errors="replace",
                               timeout=r.get("timeout", 600))
            rc, out = p.returncode, p.stdout + p.stderr
            sig = fuzz_signature(rc, out)
        except subprocess.TimeoutExpired:
            rc, out, sig = 124, f"timeout after {r.get('timeout', 600)} s", "timeout"
        except OSError as e:
            rc, out, sig = 2, f"cannot run {binary}: {e}", f"cannot run {binary}"
    dt = f"{time.time() - t0:.3f}"
    sys.stdout.write(out)
    root = ET.Element("testsuites")
    ts = ET.SubElement(root, "testsuite", name=name, tests="1", failures=str(int(rc != 0)),
                       errors="0", skipped="0", disabled="0", time=dt)
    tc = ET.SubElement(ts, "testcase", classname=name, name=r["target"], time=dt)
    if rc != 0:
        ET.SubElement(tc, "failure", message=f"{sig} (exit {rc}; was: {r.get('signature')})") \
            .text = out[-8000:]
    ET.ElementTree(root).write(xml, encoding="utf-8", xml_declaration=True)
    return rc if rc >= 0 else 128 - rc


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--replay"]:  # shrink.py --replay CASE.json --bin DIR --xml FILE
        rp = argparse.ArgumentParser(prog="shrink.py --replay")
        rp.add_argument("--replay", required=True)
        rp.add_argument("--bin", default="bin")
        rp.add_argument("--xml", required=True)
        a = rp.parse_args(argv)
        return replay(a.replay, a.bin, a.xml)
    if any(x == "--repro" or x.startswith("--repro=") for x in argv):
        fp = argparse.ArgumentParser(prog="shrink.py --repro",
                                     description="shrink a fuzz reproducer by its draws")
        fp.add_argument("--repro", required=True, help="the failing input")
        fp.add_argument("--binary", required=True, help="bin/<target>_fuzzer (or _regression)")
        fp.add_argument("--timeout", type=float, default=120)
        fp.add_argument("--out", default="out/shrink")
        fp.add_argument("--name")
        fp.add_argument("--max-runs", type=int, default=300)
        fp.add_argument("--golden", help=argparse.SUPPRESS)  # tools/harness shrink passes it
        return shrink_fuzz(fp.parse_args(argv))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--check", required=True, help="the GPU check, e.g. attn_absorbed, select")
    ap.add_argument("--base", required=True, help="a golden case (its geometry and stages)")
    ap.add_argument("--geom", nargs="*", default=[], help="FIELD=VALUE overrides of the start")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--golden", default=os.environ.get("MLA_GOLDEN_DIR", "golden"))
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--out", default="out/shrink")
    ap.add_argument("--name")
    ap.add_argument("--max-runs", type=int, default=200)
    a = ap.parse_args(argv)
    a.suite = suite_of(a.binary)
    if not a.suite:
        print("shrink: --binary must be a dense_gpu / kpool_gpu goldens test", file=sys.stderr)
        return 2
    geom, seed = base_geometry(a.golden, a.base)
    for g in a.geom:
        k, _, v = g.partition("=")
        try:
            geom[k] = float(v) if "." in v else int(v)
        except ValueError:
            print(f"shrink: --geom {g}: want FIELD=NUMBER", file=sys.stderr)
            return 2
    seed = a.seed if a.seed is not None else (seed or 1)
    start = dict(geom)
    sig, dt = run_check(a, geom, seed)
    runs = 1
    print(f"shrink: start {a.base} {a.check}: {sig or 'passes'} ({dt:.1f} s)", flush=True)
    if not sig or sig == "skipped":
        print("shrink: the start does not fail (or was skipped: no GPU?); nothing to shrink",
              file=sys.stderr)
        return 1
    fields = [f for f in (DENSE if a.suite == "dense_gpu" else KPOOL) if f in geom]
    log = lambda msg: print(msg, flush=True)
    changed = True
    while changed and runs < a.max_runs:
        changed = False
        for f in fields:
            v, n = shrink_field(a, geom, seed, sig, f, log)
            runs += n
            if v != geom[f]:
                geom = dict(geom, **{f: v})
                changed = True
    for extra, val in (("small_int", 1),):
        if geom.get(extra) != val:
            trial = dict(geom, **{extra: val})
            s, _ = run_check(a, trial, seed)
            runs += 1
            print(f"shrink: inputs {extra}={val}: {s or 'passes'}{' (kept)' if s == sig else ''}")
            if s == sig:
                geom = trial
    if seed != 1:
        s, _ = run_check(a, geom, 1)
        runs += 1
        if s == sig:
            seed = 1
    diff = ", ".join(f"{k} {start.get(k, 0)} -> {v}" for k, v in geom.items()
                     if start.get(k) != v)
    name = a.name or f"{a.base}__{a.check}"
    desc = {"base": a.base, "check": a.check, "suite": a.suite, "geom": geom, "seed": seed,
            "signature": sig,
            "description": f"{a.base} {a.check} ({sig}): {diff or 'already minimal'}"}
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, name + ".json")
    with open(path, "w") as f:
        json.dump(desc, f, indent=1, sort_keys=True)
        f.write("\n")
    case_json = json.dumps({"base": a.base, "geom": geom, "seed": seed}, sort_keys=True)
    print(f"shrink: {desc['description']} ({runs} runs)")
    print(f"shrink: wrote {path}")
    print(f"shrink: replay: MLA_CUSTOM_CASE='{case_json}' {a.binary} "
          f"--filter='{a.suite}/custom__{a.check}'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
