#!/usr/bin/env python3
"""The sanitizer tier's report: per tool, the steps it ran (binary, case filter, verdict, wall
time, errors / hazards), the kernels those steps covered (from the ncu kernel census of the same
case set) and the shared-memory kernels racecheck did not reach.

usage: sanitize_report.py --set tools/sanitize_set.tsv --census DIR --xml DIR --logs DIR
                          [--cases DIR] [--timeout SECONDS] [--wall SECONDS] --out DIR
       sanitize_report.py --set tools/sanitize_set.tsv --list [--one-per-binary]
Writes DIR/sanitize-report.md and DIR/sanitize-report.json and prints the markdown. --list
prints the set's case sets instead, one `binary<TAB>filter<TAB>key` line each, for
run-gpu-tier.sh (the one reader of the set's rows): --one-per-binary keeps each binary's first
row, keyed by the binary alone (SANITIZE_FILTER's narrower run, one step a binary).

A row of the set is a binary, its Criterion filter and, optionally, a part name: the rows of one
binary with parts split its case set into steps of their own (key `binary.part`), each with its
own census (DIR/census/KEY.csv) and its own timeout, so that no step of a growing case set
reaches the timeout. A kernel counts as covered by a tool when a step of that tool that ran to
completion (not timed out) ran a case set whose census launched it. The census reads ncu's CSV
(Kernel Name and the two launch__shared_mem_per_block_* metrics).

--cases: Criterion's XML reports of the steps (CASES/STEP.xml, --xml of the test binary), from
which the report lists each step's slowest cases (the data to rebalance the parts with).
--timeout: the steps' timeout; a step that passed in more than NEAR (3/4) of it is listed as near
its timeout, in the markdown and in the JSON's `near_timeout`.
"""
import argparse
import csv
import glob
import io
import json
import os
import re

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
NEAR = 0.75  # a passing step over this share of its timeout is near it
SLOWEST = 3  # the slowest cases a step lists in the markdown


def read_set(path):
    """[(binary, filter, key)]: key is `binary` for a row without a part, else `binary.part`.
    A binary's keys are distinct (a repeated key would overwrite another row's logs)."""
    rows, keys = [], set()
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) not in (2, 3) or not cols[0] or not cols[1]:
                raise SystemExit(f"{path}:{n}: want binary<TAB>filter[<TAB>part], got {line!r}")
            key = cols[0] + ("." + cols[2] if len(cols) == 3 and cols[2] else "")
            if key in keys:
                raise SystemExit(f"{path}:{n}: case set {key} given twice")
            keys.add(key)
            rows.append((cols[0], cols[1], key))
    return rows


def one_per_binary(rows):
    """Each binary's first row of read_set's rows, keyed by the binary alone."""
    seen, out = set(), []
    for b, f, _ in rows:
        if b not in seen:
            seen.add(b)
            out.append((b, f, b))
    return out


def cell(text):
    """text for a markdown table cell: a pipe, even inside a code span, ends the cell (GFM), so
    an extglob filter's alternatives (`*/@(a|b)`) are escaped (this report's and mutate.py's)."""
    return str(text).replace("|", "\\|")


def read_cases(path):
    """{case: seconds} from one Criterion XML report (missing or unreadable: {})."""
    if not path or not os.path.exists(path):
        return {}
    with open(path, errors="replace") as f:
        x = f.read()
    cases = {}
    for m in re.finditer(r'<testcase name="([^"]*)"[^>]*status="([A-Z]+)"[^>]*time="([0-9.]+)"',
                         x):
        if m.group(2) != "SKIPPED":  # Criterion lists the cases its filter left out as skipped
            cases[m.group(1)] = float(m.group(3))
    return cases


def short_kernel(name):
    """'void attn_walk_f32<32, walk_causal, true>(const float *, ...)' -> 'attn_walk_f32<32,
    walk_causal, true>' (the template arm stays: it is the code path)."""
    name = re.sub(r"^void\s+", "", name.strip())
    depth = 0
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            return name[:i]
    return name


def read_census(path):
    """{kernel: shared bytes (max over launches)} from one ncu CSV log (other lines ignored)."""
    kernels = {}
    if not os.path.exists(path):
        return kernels, "no census file"
    with open(path, errors="replace") as f:
        text = f.read()
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID","Process ID"')), None)
    if start is None:
        err = next((l for l in lines if "ERR_" in l or "error" in l.lower()), "no ncu table")
        return kernels, err.strip()[:200]
    rows = [l for l in lines[start:] if l.startswith('"')]
    for rec in csv.DictReader(io.StringIO("\n".join(rows))):
        k = short_kernel(rec.get("Kernel Name", "?"))
        metric = rec.get("Metric Name", "")
        try:
            value = float((rec.get("Metric Value") or "0").replace(",", ""))
        except ValueError:
            value = 0.0
        kernels.setdefault(k, 0)
        if metric.startswith("launch__shared_mem_per_block"):
            kernels[k] = max(kernels[k], int(value))
    return kernels, ""


def read_step(xml_dir, logs_dir, tool, key, cases_dir=None):
    name = f"sanitize_{tool}_{key}"
    xml = os.path.join(xml_dir, name + ".xml")
    log = os.path.join(logs_dir, name + ".log")
    res = {"step": name, "ran": os.path.exists(xml), "passed": False, "timed_out": False,
           "seconds": None, "summary": "",
           "cases": read_cases(cases_dir and os.path.join(cases_dir, name + ".xml"))}
    if not res["ran"]:
        return res
    with open(xml, errors="replace") as f:
        x = f.read()
    m = re.search(r'time="(\d+)"', x)
    res["seconds"] = int(m.group(1)) if m else None
    res["passed"] = "<failure" not in x
    res["timed_out"] = 'message="exit 124"' in x
    if os.path.exists(log):
        with open(log, errors="replace") as f:
            for line in f:
                if "ERROR SUMMARY" in line or "RACECHECK SUMMARY" in line:
                    res["summary"] = line.strip().lstrip("= ").strip()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", required=True)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--one-per-binary", action="store_true")
    ap.add_argument("--census")
    ap.add_argument("--xml")
    ap.add_argument("--logs")
    ap.add_argument("--cases", default=None)
    ap.add_argument("--timeout", type=float, default=None)
    ap.add_argument("--wall", type=int, default=None)
    ap.add_argument("--out")
    a = ap.parse_args()

    case_set = read_set(a.set)
    if a.one_per_binary:
        case_set = one_per_binary(case_set)
    if a.list:
        for row in case_set:
            print("\t".join(row))
        return
    missing = [o for o in ("census", "xml", "logs", "out") if getattr(a, o) is None]
    if missing:
        ap.error("the report needs " + ", ".join("--" + o for o in missing))
    census, census_err = {}, {}
    for _, _, key in case_set:
        census[key], census_err[key] = read_census(os.path.join(a.census, key + ".csv"))
    all_kernels = {}
    for kmap in census.values():
        for k, smem in kmap.items():
            all_kernels[k] = max(all_kernels.get(k, 0), smem)

    report = {"wall_seconds": a.wall, "tools": {}, "kernels": all_kernels,
              "census_errors": {b: e for b, e in census_err.items() if e}}
    md = ["# Sanitizer tier", ""]
    if a.wall is not None:
        md.append(f"Wall time of the tier (census + every step): **{a.wall} s**.")
    steps_all = []
    near = set()
    for tool in TOOLS:
        steps = [dict(read_step(a.xml, a.logs, tool, k, a.cases), binary=b, case_set=k, filter=f)
                 for b, f, k in case_set]
        steps_all += steps
        near |= {s["step"] for s in steps if a.timeout and s["ran"] and s["passed"]
                 and s["seconds"] is not None and s["seconds"] > NEAR * a.timeout}
        covered = {}
        for s in steps:
            if s["ran"] and not s["timed_out"]:
                covered.update(census.get(s["case_set"], {}))
        missed_smem = sorted(k for k, sm in all_kernels.items() if sm > 0 and k not in covered)
        report["tools"][tool] = {"steps": steps, "kernels_covered": sorted(covered),
                                 "shared_memory_kernels_missed": missed_smem}
        md += ["", f"## {tool}", "",
               "| case set | cases | verdict | s | summary | slowest cases (s) |",
               "| --- | --- | --- | ---: | --- | --- |"]
        for s in steps:
            verdict = ("not run" if not s["ran"] else "TIMEOUT" if s["timed_out"] else
                       "ok" if s["passed"] else "FAILED")
            if s["step"] in near:
                verdict += f" (near its timeout: {s['seconds']} of {a.timeout:g} s)"
            slow = sorted(s["cases"].items(), key=lambda kv: (-kv[1], kv[0]))[:SLOWEST]
            slow_md = ", ".join(f"{c} {t:.1f}" for c, t in slow)
            if s["cases"]:
                slow_md += f" ({len(s['cases'])} cases, {sum(s['cases'].values()):.0f} s)"
            md.append(f"| {s['case_set']} | `{cell(s['filter'])}` | {verdict} | {s['seconds']} | "
                      f"{cell(s['summary'])} | {cell(slow_md)} |")
        smem_note = ("every shared-memory kernel of the census" if not missed_smem else
                     "MISSED shared-memory kernels: " + ", ".join(missed_smem))
        md += ["", f"Kernels covered ({len(covered)}; {smem_note}):", ""]
        md += [f"- `{k}`" + (f" (shared {covered[k]} B)" if covered[k] else "")
               for k in sorted(covered)]
    if report["census_errors"]:
        md += ["", "Census problems: " + "; ".join(f"{b}: {e}"
                                                   for b, e in report["census_errors"].items())]
    n_fail = sum(1 for s in steps_all if s["ran"] and not s["passed"])
    n_to = sum(1 for s in steps_all if s["timed_out"])
    md += ["", f"Steps: {len(steps_all)}, failed {n_fail}, timed out {n_to}."]
    if near:
        md += ["", f"Near their timeout ({NEAR:.0%} of {a.timeout:g} s or more, passed): "
               + ", ".join(f"`{n}`" for n in sorted(near))
               + ". Split the case set (a part column in the set) before it times out."]
    report.update(steps=len(steps_all), failed=n_fail, timed_out=n_to,
                  near_timeout=sorted(near), timeout=a.timeout)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "sanitize-report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(a.out, "sanitize-report.json"), "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
    print("\n".join(md))


if __name__ == "__main__":
    main()
