#!/usr/bin/env python3
"""Summarise JUnit XML reports (Bazel's test.xml per target, or the GPU bundle's) into a table
per suite, a machine-readable summary.json, one merged junit.xml, and the closing line
`N passed, N failed, N skipped`.

usage: summarize.py --out DIR [--tier NAME] [--note TEXT] [--known-failures FILE] REPORT.xml...
A test case counts once: passed, failed (failure, error or crash) or skipped. A report that
cannot be parsed counts as one failed case named after its file (a crashed binary is a failure).

Known-failure ledger (--known-failures, tests/known_failures.txt): one entry a line,
`<suite>/<case>  #<issue>  <why>`; every entry must name its issue (an entry without one is an
error). A listed case that fails is reported as known (with its issue) and does not fail the run;
any other failure is new and does; a listed case that passes is reported so the entry can go.
"""
import argparse
import json
import os
import re
import sys
import xml.etree.ElementTree as ET


def suite_name(path):
    # bazel-testlogs/tests/dense_gpu_test/test.xml -> tests/dense_gpu_test
    parts = os.path.normpath(path).split(os.sep)
    if "bazel-testlogs" in parts:
        i = parts.index("bazel-testlogs")
        return "/".join(parts[i + 1:-1])
    return os.path.splitext(os.path.basename(path))[0]


def read_cases(path):
    cases = []
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as e:
        return [("(report)", "failed", f"unreadable report {path}: {e}")]
    for tc in root.iter("testcase"):
        cls = tc.get("classname")
        name = (cls + "/" if cls else "") + tc.get("name", "?")
        status = (tc.get("status") or "").upper()
        if (tc.find("failure") is not None or tc.find("error") is not None
                or status in ("FAILED", "ERRORED", "CRASHED")):
            msg = ""
            for tag in ("failure", "error"):
                el = tc.find(tag)
                if el is not None:
                    msg = (el.get("message") or el.text or "").strip()
            cases.append((name, "failed", msg[:2000]))
        elif tc.find("skipped") is not None or status == "SKIPPED":
            el = tc.find("skipped")
            cases.append((name, "skipped", (el.get("message") if el is not None else "") or ""))
        else:
            cases.append((name, "passed", ""))
    if not cases:
        # A report with no test case: Bazel's own XML for a non-JUnit test (one case).
        failures = int(root.get("failures", "0") or 0) + int(root.get("errors", "0") or 0)
        cases.append(("(target)", "failed" if failures else "passed", ""))
    return cases


def parse_ledger(path):
    """The known-failure ledger (tests/known_failures.txt) as {"suite/case": "#issue why"}; raises
    ValueError on an entry that names no issue (and OSError on an unreadable file). Also
    tools/ledger.py's reader."""
    ledger = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"^(\S+)\s+(#\d+)\s*(.*)$", line)
            if not m:
                raise ValueError(f"{path}:{n}: a known failure must name its issue: "
                                 "'<suite>/<case> #<issue> <why>'")
            ledger[m.group(1)] = f"{m.group(2)} {m.group(3)}".strip()
    return ledger


def read_ledger(path):
    """parse_ledger, {} without a path; exits on an entry that names no issue."""
    if not path:
        return {}
    try:
        return parse_ledger(path)
    except ValueError as e:
        sys.exit(str(e))


def collect(reports):
    """{suite: [(case, status, message)]} over REPORT.xml files (a suite's reports add up)."""
    suites = {}
    for r in sorted(reports):
        suites.setdefault(suite_name(r), []).extend(read_cases(r))
    return suites


def read_placement(path):
    """placement.tsv (tools/gpu_dispatch.sh's run_on_gpu: job, gpu, slot, host, seconds, exit a
    line) -> ({job: gpu}, {job: seconds}); a GPU given by number is stored as a number."""
    where, durations = {}, {}
    if not path or not os.path.exists(path):
        return where, durations
    with open(path) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 5 or not cols[0]:
                continue
            where[cols[0]] = int(cols[1]) if cols[1].isdigit() else cols[1]
            try:
                durations[cols[0]] = float(cols[4])
            except ValueError:
                pass
    return where, durations


def summarize(suites, out, tier="cpu", notes=(), ledger=None, extra=None, properties=None):
    """Print the table, write summary-TIER.json (plus the EXTRA keys), junit-TIER.xml (a
    testsuite gets PROPERTIES[suite] as JUnit properties) and result-TIER.txt; print the closing
    line. Returns 1 when a failure is not in the LEDGER ({"suite/case": "#issue why"}), else 0."""
    ledger = ledger or {}
    notes = list(notes)
    os.makedirs(out, exist_ok=True)
    total = {"passed": 0, "failed": 0, "skipped": 0}
    rows = []
    for s, cases in sorted(suites.items()):
        c = {"passed": 0, "failed": 0, "skipped": 0}
        for _, st, _ in cases:
            c[st] += 1
            total[st] += 1
        rows.append((s, c))
    width = max([len(s) for s, _ in rows] + [5])
    print(f"\n{'suite':<{width}}  passed  failed  skipped")
    for s, c in rows:
        print(f"{s:<{width}}  {c['passed']:>6}  {c['failed']:>6}  {c['skipped']:>7}")
    failed = [(s, n, m) for s, cases in sorted(suites.items())
              for n, st, m in cases if st == "failed"]
    known = [(s, n, m) for s, n, m in failed if f"{s}/{n}" in ledger]
    new = [(s, n, m) for s, n, m in failed if f"{s}/{n}" not in ledger]
    passing_known = sorted(k for k in ledger
                           if any(f"{s}/{n}" == k and st == "passed"
                                  for s, cases in suites.items() for n, st, _ in cases))
    if new:
        print("\nfailed cases (new):")
        for s, n, m in new:
            print(f"  {s}: {n}" + (f"  -- {m.splitlines()[0]}" if m else ""))
    if known:
        print("\nknown failures (ledger):")
        for s, n, m in known:
            print(f"  {s}: {n}  [{ledger[f'{s}/{n}']}]")
    for k in passing_known:
        print(f"ledger entry now passes, remove it: {k} [{ledger[k]}]")
    for n in notes:
        print(n)
    summary = {"tier": tier, "totals": total, "notes": notes,
               "suites": {s: c for s, c in rows},
               "failed": [{"suite": s, "case": n, "message": m, "known": ledger.get(f"{s}/{n}")}
                          for s, n, m in failed],
               "ledger_now_passing": passing_known}
    summary.update(extra or {})
    with open(os.path.join(out, f"summary-{tier}.json"), "w") as f:
        json.dump(summary, f, indent=2)
    # One merged JUnit file for CI systems.
    root = ET.Element("testsuites", tests=str(sum(total.values())), failures=str(total["failed"]))
    for s, cases in sorted(suites.items()):
        ts = ET.SubElement(root, "testsuite", name=s, tests=str(len(cases)))
        if (properties or {}).get(s):
            props = ET.SubElement(ts, "properties")
            for k, v in sorted(properties[s].items()):
                ET.SubElement(props, "property", name=k, value=str(v))
        for n, st, m in cases:
            tc = ET.SubElement(ts, "testcase", classname=s, name=n)
            if st == "failed":
                ET.SubElement(tc, "failure", message=m[:500])
            elif st == "skipped":
                ET.SubElement(tc, "skipped", message=m[:500])
    ET.ElementTree(root).write(os.path.join(out, f"junit-{tier}.xml"), encoding="utf-8",
                               xml_declaration=True)
    if known:
        print(f"{len(known)} of the failures are known (ledger), {len(new)} new")
    line = f"{total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped"
    with open(os.path.join(out, f"result-{tier}.txt"), "w") as f:
        f.write(line + "\n")
    print(line)
    return 1 if new else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--tier", default="cpu")
    ap.add_argument("--note", action="append", default=[])
    ap.add_argument("--known-failures", default=None)
    ap.add_argument("--placement", default=None,
                    help="placement.tsv of tools/gpu_dispatch.sh: where each job ran")
    ap.add_argument("--shard", default=None, help="I/N: this run was shard I of N")
    ap.add_argument("reports", nargs="*")
    a = ap.parse_args()
    ledger = read_ledger(a.known_failures)
    suites = collect(a.reports)
    extra, props = {}, {}
    if a.placement:
        where, durations = read_placement(a.placement)
        extra.update(where=where, durations=durations)
        props = {s: {"gpu": where[s]} for s in suites if s in where}
    if a.shard:
        extra["shard"] = a.shard
    return summarize(suites, a.out, a.tier, a.note, ledger, extra, props)


if __name__ == "__main__":
    sys.exit(main())
