#!/usr/bin/env python3
"""The night-over-night ledger of the GPU tier (run-gpu-tier.sh --nightly; docs/nightly.md).

usage:
  ledger.py record OUT_DIR --commit C --gpu G [--budget-min M] [--bundle DIR] -o record.json
  ledger.py append HISTORY record.json
  ledger.py report HISTORY [--known-failures tests/known_failures.txt] [--md report.md]
                   [--html report.html]

record   One JSON record of a run from its out dir (what run-gpu-tier.sh writes there):
         summary-gpu.json (or, without it, xml/*.xml: per-suite counts and the failing cases),
         logs/fuzz_*.summary (per fuzz target: executions, exec/s, cov, ft, corpus growth),
         repro/ (reproducers, each with its target and replay command), sanitize-report.json
         (per step verdict and wall), placement.tsv (where and how long each job ran),
         nightly-sections.tsv (the nightly plan's sections) and bench-*.json (benchmark
         medians with their spread: a list of {kernel, shape, arm, median_us, p10_us, p90_us};
         the benchmarks do not write it yet, and the record says so when there is none).
append   Appends the record to HISTORY as one JSON line (JSONL).
report   Compares the last record of HISTORY with the one before: new, still failing, fixed
         and known failures (the known-failure ledger: `<suite>/<case>  #<issue>  <why>`),
         fuzz findings with their replay commands, sanitizer regressions, kernels slower
         beyond the noise measured in the same run (median grown by more than
         max(3 x (p90 - p10) / median of tonight's run, 5 %)). Prints markdown; --md writes it.

Exit codes (report): 0 clean; 1 a failure the known-failure ledger does not list (a new one,
one still failing since an earlier night, a fuzz finding, a sanitizer failure); 2 a kernel
slower beyond noise and no such failure; 3 an infrastructure problem (a missing or corrupt
input: history, record, known-failure ledger). A first record (no previous one) is no problem:
the report says "first record" and judges the run alone. record and append exit 3 on a missing
or corrupt input, else 0.
"""
import argparse
import datetime
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import summarize  # noqa: E402  (tools/summarize.py, beside this file here and in the bundle)

VERSION = 1
ASAN = "ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0"
NOISE_FLOOR = 0.05  # a kernel is slower only beyond max(3 x its spread, 5 %)
NOISE_FACTOR = 3.0
SUMMARY_RE = re.compile(
    r"^fuzz_(?P<target>\S+)\s+(?P<status>ok|FAILED \(exit -?\d+\)) \((?P<workers>\d+) workers: "
    r"(?P<execs>\d+) executions in (?P<secs>[\d.]+) s = (?P<rate>\d+) exec/s; "
    r"cov (?P<cov>\d+) ft (?P<ft>\d+); corpus (?P<n0>\d+) -> (?P<n1>\d+) files\)\s*$")


class Infra(Exception):
    """A missing or corrupt input: exit 3."""


# ---- record ---------------------------------------------------------------------------------
def _load_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Infra(f"{what} {path}: {e}") from e


def _cases_from_xml(xml_dir):
    """{suite: [(case, status, message)]} as tools/summarize.py counts them."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import summarize  # noqa: E402 (beside this file, here and in the bundle)
    return summarize.collect(glob.glob(os.path.join(xml_dir, "*.xml")))


def read_tests(out):
    """(suites {suite: counts}, totals, failures [...], ledger_now_passing, source)."""
    path = os.path.join(out, "summary-gpu.json")
    if os.path.exists(path):
        s = _load_json(path, "summary")
        try:
            suites = {k: {st: int(v.get(st, 0)) for st in ("passed", "failed", "skipped")}
                      for k, v in s["suites"].items()}
            failures = [{"id": f"{f['suite']}/{f['case']}", "suite": f["suite"],
                         "case": f["case"], "message": _first_line(f.get("message", "")),
                         "known": f.get("known")} for f in s.get("failed", [])]
        except (KeyError, TypeError, AttributeError) as e:
            raise Infra(f"summary {path}: not a summary-gpu.json ({e!r})") from e
        totals = {st: sum(c[st] for c in suites.values()) for st in ("passed", "failed", "skipped")}
        return suites, totals, failures, list(s.get("ledger_now_passing", [])), "summary-gpu.json"
    xml_dir = os.path.join(out, "xml")
    if not glob.glob(os.path.join(xml_dir, "*.xml")):
        raise Infra(f"{out}: neither summary-gpu.json nor xml/*.xml (did the run start?)")
    suites, failures = {}, []
    for s, cases in sorted(_cases_from_xml(xml_dir).items()):
        c = suites.setdefault(s, {"passed": 0, "failed": 0, "skipped": 0})
        for name, st, msg in cases:
            c[st] += 1
            if st == "failed":
                failures.append({"id": f"{s}/{name}", "suite": s, "case": name,
                                 "message": _first_line(msg), "known": None})
    totals = {st: sum(c[st] for c in suites.values()) for st in ("passed", "failed", "skipped")}
    return suites, totals, failures, [], "xml"


def _first_line(msg):
    msg = (msg or "").strip()
    return msg.splitlines()[0][:300] if msg else ""


def read_fuzz(out):
    fuzz = {}
    for path in sorted(glob.glob(os.path.join(out, "logs", "fuzz_*.summary"))):
        with open(path, errors="replace") as f:
            lines = [l for l in f.read().splitlines() if l.strip()]
        m = SUMMARY_RE.match(lines[-1]) if lines else None
        if not m:
            raise Infra(f"fuzz summary {path}: unreadable line {lines[-1:]!r}")
        n0, n1 = int(m["n0"]), int(m["n1"])
        fuzz[m["target"]] = {
            "status": m["status"], "workers": int(m["workers"]), "executions": int(m["execs"]),
            "seconds": float(m["secs"]), "exec_per_s": int(m["rate"]), "cov": int(m["cov"]),
            "ft": int(m["ft"]), "corpus_before": n0, "corpus_after": n1,
            "new_corpus_files": n1 - n0, "reproducers": []}
    return fuzz


def read_reproducers(out, bundle, fuzz):
    """([{target, path, replay}], [{kind, file, bytes, path}]): the fuzz reproducers and the
    test reproducers (*.safetensors, written by a failing test) under OUT/repro. The target: the name a
    FUZZ_ASSERT reproducer carries (repro-<target>-<hash>.bin), else the fuzz or replay log that
    names the file (libFuzzer's crash-/leak-/timeout-/oom- artifacts)."""
    repro_dir = os.path.join(out, "repro")
    logs = []  # (target, log): the fuzz runs' logs, then the corpus replays'
    for path in sorted(glob.glob(os.path.join(out, "logs", "fuzz_*.log"))):
        logs.append((os.path.basename(path)[len("fuzz_"):-len(".log")], path))
    for path in sorted(glob.glob(os.path.join(out, "logs", "*_replay.log"))):
        logs.append((os.path.basename(path)[:-len("_replay.log")], path))
    texts = {}
    found, tests = [], []
    for path in sorted(glob.glob(os.path.join(repro_dir, "*"))):
        if not os.path.isfile(path):
            continue
        name = os.path.basename(path)
        if name.endswith(".safetensors"):
            # a test's reproducer (tests/lib/testbed.c: repro-<suite>-<test>-<tensor>.safetensors,
            # the kernel's and the reference's tensors): evidence of a failing test, which the
            # suites already count; not a fuzz finding
            tests.append({"kind": "test", "file": name, "bytes": os.path.getsize(path),
                          "path": os.path.abspath(path)})
            continue
        target = None
        m = re.match(r"^repro-(.+)-[0-9a-fA-F]+\.bin$", name)
        if m:
            target = m.group(1)
        else:
            for key, log in logs:
                if log not in texts:
                    with open(log, errors="replace") as f:
                        texts[log] = f.read()
                if name in texts[log]:
                    target = key
                    break
        ap = os.path.abspath(path)
        shown = os.path.relpath(ap, bundle) if bundle and ap.startswith(
            os.path.abspath(bundle) + os.sep) else ap
        replay = (f"{ASAN} bin/{target}_fuzzer {shown}" if target else
                  f"{ASAN} bin/<target>_fuzzer {shown}  (target unknown: no log names it)")
        r = {"target": target, "path": shown, "file": name, "bytes": os.path.getsize(path),
             "replay": replay}
        found.append(r)
        if target in fuzz:
            fuzz[target]["reproducers"].append(shown)
    return found, tests


def read_sanitizer(out):
    path = os.path.join(out, "sanitize-report.json")
    if not os.path.exists(path):
        return None
    rep = _load_json(path, "sanitizer report")
    try:
        steps = []
        for tool, t in sorted(rep["tools"].items()):
            for s in t["steps"]:
                verdict = ("not run" if not s["ran"] else "TIMEOUT" if s["timed_out"] else
                           "ok" if s["passed"] else "FAILED")
                steps.append({"step": s["step"], "tool": tool, "binary": s.get("binary"),
                              "verdict": verdict, "seconds": s.get("seconds"),
                              "summary": s.get("summary", "")})
        return {"wall_seconds": rep.get("wall_seconds"), "steps": steps,
                "failed": rep.get("failed"), "timed_out": rep.get("timed_out"),
                "near_timeout": rep.get("near_timeout") or [], "timeout": rep.get("timeout"),
                "shared_memory_kernels_missed": {
                    tool: t.get("shared_memory_kernels_missed", [])
                    for tool, t in rep["tools"].items()}}
    except (KeyError, TypeError, AttributeError) as e:
        raise Infra(f"sanitizer report {path}: unexpected form ({e!r})") from e


def read_bench(out):
    files = sorted(glob.glob(os.path.join(out, "bench-*.json")))
    if not files:
        return None, ("no bench-*.json in the out dir (no benchmark ran, or none wrote "
                      "$MLA_BENCH_JSON): no benchmark medians recorded")
    rows = []
    for path in files:
        data = _load_json(path, "benchmark JSON")
        if isinstance(data, dict):
            data = data.get("results")
        if not isinstance(data, list):
            raise Infra(f"benchmark JSON {path}: not a list of results")
        for r in data:
            try:
                row = {"kernel": str(r["kernel"]), "shape": str(r.get("shape", "")),
                       "arm": str(r.get("arm", "")), "median_us": float(r["median_us"]),
                       "p10_us": None if r.get("p10_us") is None else float(r["p10_us"]),
                       "p90_us": None if r.get("p90_us") is None else float(r["p90_us"]),
                       "source": os.path.basename(path)}
            except (KeyError, TypeError, ValueError) as e:
                raise Infra(f"benchmark JSON {path}: bad result {r!r} ({e!r})") from e
            if row["median_us"] <= 0:
                raise Infra(f"benchmark JSON {path}: median_us <= 0 in {r!r}")
            rows.append(row)
    return rows, f"{len(rows)} results from {len(files)} bench-*.json file(s)"


def read_placement(out):
    path = os.path.join(out, "placement.tsv")
    jobs = {}
    if os.path.exists(path):
        with open(path, errors="replace") as f:
            for line in f:
                c = line.rstrip("\n").split("\t")
                if len(c) >= 6 and c[0]:
                    try:
                        jobs[c[0]] = {"gpu": c[1], "seconds": float(c[4]), "exit": int(c[5])}
                    except ValueError:
                        raise Infra(f"placement {path}: bad line {line.strip()!r}") from None
    return jobs


def read_sections(out):
    path = os.path.join(out, "nightly-sections.tsv")
    sections = []
    if os.path.exists(path):
        with open(path, errors="replace") as f:
            for line in f:
                c = line.rstrip("\n").split("\t")
                if len(c) >= 3 and c[0]:
                    sections.append({"section": c[0], "start_s": _num(c[1]), "end_s": _num(c[2]),
                                     "note": c[3] if len(c) > 3 else ""})
    return sections


def _num(s):
    try:
        return float(s)
    except ValueError:
        return None


def read_mutation(out):
    """The sampled mutate pass of the night (OUT/mutate/mutation-report.json, tools/mutate.py):
    mutate.totals of its results against the equivalent ledger (mutants, killed, survived,
    equivalent, no_compile, cpu_only, score) with the survivors as lines and the run's meta, or
    None when none ran."""
    path = os.path.join(out, "mutate", "mutation-report.json")
    if not os.path.exists(path):
        return None
    rep = _load_json(path, "mutation report")
    import mutate  # tools/mutate.py, beside this file here and in the bundle
    try:
        t = mutate.totals(rep["results"], mutate.read_equivalent())
        t["survivors"] = [f"{r['file']}:{r['line']} {r['operator']}: {r['before']}"
                          for r in t["survivors"]]
    except (KeyError, TypeError, AttributeError) as e:
        raise Infra(f"mutation report {path}: unexpected form ({e!r})") from e
    except SystemExit as e:  # a malformed equivalent ledger
        raise Infra(str(e)) from e
    if t["score"] is not None:
        t["score"] = round(t["score"], 4)
    return dict(t, meta=rep.get("meta"))


def make_record(out, commit, gpu, budget_min=None, bundle=None):
    if not os.path.isdir(out):
        raise Infra(f"out dir {out}: not a directory")
    if bundle is None:  # the runner's default: OUT = <bundle>/out
        parent = os.path.dirname(os.path.abspath(out))
        bundle = parent if os.path.exists(os.path.join(parent, "run-gpu-tier.sh")) else None
    suites, totals, failures, now_passing, source = read_tests(out)
    fuzz = read_fuzz(out)
    repros, test_repros = read_reproducers(out, bundle, fuzz)
    bench, bench_note = read_bench(out)
    return {
        "ledger_version": VERSION, "commit": commit, "gpu": gpu, "budget_min": budget_min,
        "recorded_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "out_dir": os.path.abspath(out), "bundle_dir": bundle and os.path.abspath(bundle),
        "tests_from": source, "totals": totals, "suites": suites, "failures": failures,
        "ledger_now_passing": now_passing, "fuzz": fuzz, "reproducers": repros,
        "test_reproducers": test_repros, "mutation": read_mutation(out),
        "sanitizer": read_sanitizer(out), "bench": bench, "bench_note": bench_note,
        "jobs": read_placement(out), "sections": read_sections(out)}


REQUIRED = {"ledger_version": int, "commit": str, "suites": dict, "failures": list, "fuzz": dict,
            "reproducers": list}


def check_record(rec, where):
    if not isinstance(rec, dict):
        raise Infra(f"{where}: not a JSON object")
    for k, t in REQUIRED.items():
        if not isinstance(rec.get(k), t):
            raise Infra(f"{where}: no '{k}' ({t.__name__})")
    if rec["ledger_version"] > VERSION:
        raise Infra(f"{where}: ledger_version {rec['ledger_version']} is newer than {VERSION}")
    if rec.get("bench") is not None and not isinstance(rec["bench"], list):
        raise Infra(f"{where}: 'bench' is neither null nor a list")
    return rec


# ---- report ---------------------------------------------------------------------------------
def read_history(path, last=60):
    """(records, skipped) from a JSONL history: up to the last LAST records, oldest first (the
    last is tonight's, the one before it the previous night's), and how many older lines were
    unreadable and left out (the report page's plots skip them). The last two lines are read
    strictly: Infra on a missing, empty or corrupt history there."""
    try:
        with open(path) as f:
            lines = [(n, l) for n, l in enumerate(f, 1) if l.strip()]
    except OSError as e:
        raise Infra(f"history {path}: {e}") from e
    if not lines:
        raise Infra(f"history {path}: no record")
    window = lines[-last:]
    recs, skipped = [], 0
    for k, (n, line) in enumerate(window):
        try:
            try:
                rec = json.loads(line)
            except ValueError as e:
                raise Infra(f"history {path}:{n}: corrupt record ({e})") from e
            recs.append(check_record(rec, f"history {path}:{n}"))
        except Infra:
            if k >= len(window) - 2:
                raise
            skipped += 1
    return recs, skipped


def read_known(path):
    """The known-failure ledger through summarize.parse_ledger (one parser); None without a path."""
    if not path:
        return None
    try:
        return summarize.parse_ledger(path)
    except ValueError as e:
        raise Infra(str(e)) from e
    except OSError as e:
        raise Infra(f"known-failure ledger {path}: {e}") from e


def bench_key(r):
    return "/".join(x for x in (r["kernel"], r.get("shape", ""), r.get("arm", "")) if x)


def compare_bench(cur, prev):
    """(slower, faster, within) lists of dicts; each kernel judged by tonight's own spread."""
    slower, faster, within = [], [], []
    prev_by = {bench_key(r): r for r in prev or []}
    for r in cur or []:
        p = prev_by.get(bench_key(r))
        if not p:
            continue
        spread = 0.0
        if r.get("p10_us") is not None and r.get("p90_us") is not None:
            spread = max(0.0, (r["p90_us"] - r["p10_us"]) / r["median_us"])
        threshold = max(NOISE_FACTOR * spread, NOISE_FLOOR)
        change = r["median_us"] / p["median_us"] - 1.0
        row = {"kernel": bench_key(r), "prev_us": p["median_us"], "now_us": r["median_us"],
               "change": change, "spread": spread, "threshold": threshold}
        (slower if change > threshold else faster if change < -threshold else within).append(row)
    return slower, faster, within


def build_report(cur, prev, known_file):
    """(exit code, verdict text, markdown lines)."""
    def known_of(f):
        if known_file is not None:
            return known_file.get(f["id"])
        return f.get("known")

    def step_known(step):  # a non-Criterion step's JUnit case: <step>/<step>/<step>
        ids = known_file.keys() if known_file is not None else [
            f["id"] for f in cur["failures"] if f.get("known")]
        return any(k.split("/")[0] == step for k in ids)

    cur_fail = {f["id"]: f for f in cur["failures"]}
    prev_fail = {f["id"]: f for f in prev["failures"]} if prev else {}
    known = [f for f in cur["failures"] if known_of(f)]
    unknown = [f for f in cur["failures"] if not known_of(f)]
    new = [f for f in unknown if f["id"] not in prev_fail]
    still = [f for f in unknown if f["id"] in prev_fail]
    fixed = [f for i, f in sorted(prev_fail.items())
             if i not in cur_fail and f["suite"] in cur["suites"]]
    gone = [f for i, f in sorted(prev_fail.items())
            if i not in cur_fail and f["suite"] not in cur["suites"]]
    prev_repro = {r["file"] for r in prev["reproducers"]} if prev else set()
    findings = []
    for r in cur["reproducers"]:
        t = r.get("target")
        k = bool(t) and (step_known(f"fuzz_{t}") or step_known(f"{t}_replay"))
        findings.append(dict(r, known=k, again=r["file"] in prev_repro))
    san_cur = (cur.get("sanitizer") or {}).get("steps", [])
    san_prev = {s["step"]: s for s in ((prev or {}).get("sanitizer") or {}).get("steps", [])}
    san_bad = [s for s in san_cur if s["verdict"] in ("FAILED", "TIMEOUT")]
    san_regress = [s for s in san_bad if san_prev.get(s["step"], {}).get("verdict") != s["verdict"]]
    san_unknown = [s for s in san_bad if not step_known(s["step"])]
    slower, faster, within = compare_bench(cur.get("bench"), (prev or {}).get("bench"))

    failing = bool(unknown or any(not f["known"] for f in findings) or san_unknown)
    code = 1 if failing else 2 if slower else 0
    verdict = {0: "clean", 1: "FAILED: a failure the known-failure ledger does not list",
               2: "PERFORMANCE REGRESSION: a kernel slower beyond noise"}[code]

    md = [f"# Nightly ledger: {cur['commit'][:12]} on {cur.get('gpu') or '?'}", ""]
    md.append(f"Recorded {cur.get('recorded_at', '?')}"
              + (f", budget {cur['budget_min']:g} min" if cur.get("budget_min") else "") + ".")
    if prev:
        md.append(f"Against the previous record: {prev['commit'][:12]} on {prev.get('gpu') or '?'}"
                  f", recorded {prev.get('recorded_at', '?')}.")
    else:
        md.append("**first record**: nothing to compare with; the run is judged alone.")
    md += ["", f"**Verdict: {verdict}** (exit {code}).", ""]
    t = cur.get("totals", {})
    md.append(f"{t.get('passed', 0)} passed, {t.get('failed', 0)} failed, "
              f"{t.get('skipped', 0)} skipped.")
    if cur.get("sections"):
        md += ["", "| section | start s | end s | note |", "| --- | ---: | ---: | --- |"]
        md += [f"| {s['section']} | {_fmt(s['start_s'])} | {_fmt(s['end_s'])} | {s['note']} |"
               for s in cur["sections"]]

    md += ["", "## Suites", "", "| suite | passed | failed | skipped | failed before |",
           "| --- | ---: | ---: | ---: | ---: |"]
    for s, c in sorted(cur["suites"].items()):
        pc = (prev or {}).get("suites", {}).get(s)
        md.append(f"| {s} | {c['passed']} | {c['failed']} | {c['skipped']} | "
                  f"{pc['failed'] if pc else '-'} |")

    def fail_list(title, items, extra=lambda f: ""):
        md.extend(["", f"## {title} ({len(items)})", ""])
        md.extend([f"- `{f['id']}`" + (f" -- {f['message']}" if f.get("message") else "")
                   + extra(f) for f in items] or ["none"])

    fail_list("New failures" if prev else "Failures (first record)", new)
    if prev:
        fail_list("Still failing", still)
        fail_list("Fixed", fixed)
        if gone:
            fail_list("Failing before, not run tonight", gone)
    fail_list("Known failures (tests/known_failures.txt)", known, lambda f: f"  [{known_of(f)}]")
    if cur.get("ledger_now_passing"):
        md += ["", "Known-failure entries that now pass (remove them): "
               + ", ".join(f"`{k}`" for k in cur["ledger_now_passing"])]

    md += ["", "## Fuzzing", ""]
    if cur["fuzz"]:
        md += ["| target | status | executions | exec/s | exec/s before | cov | ft | new corpus "
               "files | reproducers |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for name, z in sorted(cur["fuzz"].items()):
            pz = (prev or {}).get("fuzz", {}).get(name)
            md.append(f"| {name} | {z['status']} | {z['executions']} | {z['exec_per_s']} | "
                      f"{pz['exec_per_s'] if pz else '-'} | {z['cov']} | {z['ft']} | "
                      f"{z['new_corpus_files']} | {len(z['reproducers'])} |")
    else:
        md.append("No fuzz target ran.")
    md += ["", f"### Fuzz findings ({len(findings)})", ""]
    if findings:
        where = cur.get("bundle_dir") or "<bundle dir>"
        for r in findings:
            tag = "known" if r["known"] else "seen before too" if r["again"] else "new"
            md.append(f"- {r.get('target') or '?'}: `{r['path']}` ({r['bytes']} bytes, {tag}); "
                      f"replay from the bundle dir: `(cd {where} && {r['replay']})`")
    else:
        md.append("none")

    trs = cur.get("test_reproducers") or []
    md += ["", f"### Test reproducers ({len(trs)})", ""]
    if trs:
        md.append("Written by failing tests (kernel and reference tensors; the failures above "
                  "carry the verdict and each test's re-run line is in its log):")
        md += [f"- `{r['path']}` ({r['bytes']} bytes)" for r in trs]
    else:
        md.append("none")

    mu = cur.get("mutation")
    if mu:
        pm = (prev or {}).get("mutation") or {}
        sc = "-" if mu["score"] is None else f"{mu['score']:.1%}"
        psc = "-" if pm.get("score") is None else f"{pm['score']:.1%}"
        md += ["", "## Mutation (sampled)", "",
               # the report's own first line ("N mutants (sampled ...), ... checks, ...") when
               # there is one, else the count: never both ("2 mutants (2 mutants (...")
               f"{mu.get('meta') or str(mu['mutants']) + ' mutants'}: {mu['killed']} killed, "
               f"{mu['survived']} survived, {mu['equivalent']} equivalent, "
               f"{mu['no_compile']} did not compile, {mu['cpu_only']} CPU-only; score {sc} "
               f"(last night {psc})."]
        md += [f"- survivor `{x}`" for x in mu["survivors"][:20]]
    md += ["", "## Sanitizer", ""]
    san = cur.get("sanitizer")
    if san:
        n_ok = sum(1 for s in san_cur if s["verdict"] == "ok")
        md.append(f"{len(san_cur)} steps, {n_ok} ok, {len(san_bad)} failed or timed out; "
                  f"tier wall {san.get('wall_seconds')} s.")
        if san.get("near_timeout"):  # a warning, not a failure: split before it times out
            md.append(f"Passed near their timeout ({san.get('timeout')} s): " + ", ".join(
                f"`{n}`" for n in san["near_timeout"]) + " (split the case set in parts, "
                "tools/sanitize_set.tsv).")
        missed = {k: v for k, v in (san.get("shared_memory_kernels_missed") or {}).items() if v}
        if missed:
            md.append("Shared-memory kernels racecheck/other tools missed: " + "; ".join(
                f"{k}: {', '.join(v)}" for k, v in sorted(missed.items())))
        md += ["", f"Sanitizer regressions ({len(san_regress)}):", ""]
        md += [f"- `{s['step']}`: {s['verdict']} (before: "
               f"{san_prev.get(s['step'], {}).get('verdict', 'not recorded')}) {s['summary']}"
               + (" [known]" if step_known(s["step"]) else "") for s in san_regress] or ["none"]
    else:
        md.append("The sanitizer tier did not run (no sanitize-report.json).")

    md += ["", "## Benchmarks", ""]
    if cur.get("bench") is None:
        md.append(cur.get("bench_note") or "no benchmark results recorded")
    elif prev is None or prev.get("bench") is None:
        md.append(f"{len(cur['bench'])} results recorded; no previous benchmark results to "
                  "compare with.")
    else:
        md.append(f"A kernel is slower when its median grew by more than max({NOISE_FACTOR:g} x "
                  f"its spread (p90 - p10) / median in tonight's run, {NOISE_FLOOR:.0%}).")
        for title, rows in (("Slower beyond noise", slower), ("Faster beyond noise", faster)):
            md += ["", f"### {title} ({len(rows)})", ""]
            if rows:
                md += ["| kernel | before us | now us | change | threshold |",
                       "| --- | ---: | ---: | ---: | ---: |"]
                md += [f"| {r['kernel']} | {r['prev_us']:.2f} | {r['now_us']:.2f} | "
                       f"{r['change']:+.1%} | {r['threshold']:.1%} |" for r in rows]
            else:
                md.append("none")
        md += ["", f"{len(within)} kernels within noise."]
    return code, verdict, md


def _fmt(x):
    return "-" if x is None else f"{x:.0f}"


# ---- CLI ------------------------------------------------------------------------------------
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("out_dir")
    r.add_argument("--commit", required=True)
    r.add_argument("--gpu", required=True)
    r.add_argument("--budget-min", type=float, default=None)
    r.add_argument("--bundle", default=None, help="the bundle dir replays run from "
                   "(default: OUT_DIR's parent when it holds run-gpu-tier.sh)")
    r.add_argument("-o", "--output", required=True)
    a = sub.add_parser("append")
    a.add_argument("history")
    a.add_argument("record")
    p = sub.add_parser("report")
    p.add_argument("history")
    p.add_argument("--known-failures", default=None)
    p.add_argument("--md", default=None)
    p.add_argument("--html", default=None, help="also write the one-page HTML report "
                   "(tools/ledger_html.py: tables and a plot per kernel over the nights)")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "record":
            rec = make_record(args.out_dir, args.commit, args.gpu, args.budget_min, args.bundle)
            with open(args.output, "w") as f:
                json.dump(rec, f, indent=1, sort_keys=True)
                f.write("\n")
            print(f"ledger: record of {args.out_dir} -> {args.output}")
            return 0
        if args.cmd == "append":
            rec = check_record(_load_json(args.record, "record"), f"record {args.record}")
            d = os.path.dirname(os.path.abspath(args.history))
            os.makedirs(d, exist_ok=True)
            with open(args.history, "a") as f:
                f.write(json.dumps(rec, sort_keys=True, separators=(",", ":")) + "\n")
            print(f"ledger: appended to {args.history}")
            return 0
        recs, skipped = read_history(args.history)
        cur, prev = recs[-1], (recs[-2] if len(recs) > 1 else None)
        code, verdict, md = build_report(cur, prev, read_known(args.known_failures))
        text = "\n".join(md) + "\n"
        sys.stdout.write(text)
        if args.md:
            with open(args.md, "w") as f:
                f.write(text)
        if args.html:
            import ledger_html
            with open(args.html, "w") as f:
                f.write(ledger_html.render(recs, code, verdict, text, bench_key, compare_bench,
                                           skipped))
        return code
    except Infra as e:
        print(f"ledger: infrastructure problem: {e}", file=sys.stderr)
        if getattr(args, "md", None):
            with open(args.md, "w") as f:
                f.write(f"# Nightly ledger\n\n**Verdict: infrastructure problem** (exit 3): {e}\n")
        return 3


if __name__ == "__main__":
    sys.exit(main())
