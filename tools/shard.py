#!/usr/bin/env python3
"""Split the nightly GPU tier's jobs over N shards, and merge the shards' results into one summary.

usage:
  shard.py plan --shard I/N [--durations FILE] [--set GLOB=SECONDS]... (--jobs-file FILE | JOB...)
      Prints shard I's jobs, one a line, longest first. Greedy longest-processing-time: the jobs,
      longest first (ties by name), each go to the least loaded shard (ties: the lowest index).
      Deterministic: the same jobs, N and durations give the same split on every host.
  shard.py table --shards N [--durations FILE] [--set GLOB=SECONDS]... (--jobs-file FILE | JOB...)
      Every shard's jobs and estimated load.
  shard.py merge --out DIR [--known-failures FILE] [--tier gpu] [--expect N] SHARD_DIR...
      The shards' out dirs (run-gpu-tier.sh --shard I/N; each has xml/, summary-gpu.json,
      shard.txt) -> one summary in DIR, through tools/summarize.py: the table, summary-gpu.json
      (with `shards`: per-shard provenance, `where`: job -> GPU, `shard_of`: job -> shard),
      junit-gpu.xml and the closing line `N passed, N failed, N skipped`. Exit 1 on any failure
      that the known-failure ledger does not list; a shard that left no summary (or, with
      --expect N, a shard index with no directory) counts as a failure.

Durations (--durations): JSON, either {job: seconds} or an object with a `durations` map (the
committed tools/shard_durations.json, or a previous run's summary-gpu.json, merged or not).
Jobs without a recorded duration count as the median of the recorded ones among the jobs
planned (1 s when none is); --set overrides by glob (e.g. 'fuzz_*=120': a fuzzer's time is known).
"""
import argparse
import fnmatch
import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import summarize  # noqa: E402  (the one parser of JUnit reports and of the ledger)


def parse_spec(spec):
    """'I/N' -> (I, N), 0 <= I < N."""
    try:
        i, n = (int(x) for x in spec.split("/"))
    except ValueError:
        raise ValueError(f"a shard is I/N, not '{spec}'")
    if n < 1 or not 0 <= i < n:
        raise ValueError(f"a shard is I/N with 0 <= I < N, not '{spec}'")
    return i, n


def load_durations(path):
    """{job: seconds} from a durations file or a summary (its `durations` map)."""
    if not path:
        return {}
    with open(path) as f:
        data = json.load(f)
    if isinstance(data, dict) and isinstance(data.get("durations"), dict):
        data = data["durations"]
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object of job -> seconds")
    return {k: float(v) for k, v in data.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}


def costs(jobs, durations, overrides=()):
    """{job: estimated seconds}: recorded, else the median of the recorded ones (1 s if none)."""
    cost = {}
    for j in jobs:
        for pattern, secs in overrides:
            if fnmatch.fnmatchcase(j, pattern):
                cost[j] = secs
        if j not in cost and j in durations:
            cost[j] = durations[j]
    known = [cost[j] for j in jobs if j in cost]
    default = statistics.median(known) if known else 1.0
    return {j: max(0.0, cost.get(j, default)) for j in jobs}


def plan(jobs, n, durations=None, overrides=()):
    """Every shard's job list (longest first) and estimated loads: greedy LPT, ties by name."""
    if n < 1:
        raise ValueError("N must be at least 1")
    jobs = sorted(set(jobs))
    cost = costs(jobs, durations or {}, overrides)
    shards = [[] for _ in range(n)]
    loads = [0.0] * n
    for j in sorted(jobs, key=lambda j: (-cost[j], j)):
        k = min(range(n), key=lambda i: (loads[i], i))
        shards[k].append(j)
        loads[k] += cost[j]
    return shards, loads, cost


def read_jobs(a):
    jobs = list(a.jobs)
    if a.jobs_file:
        with open(a.jobs_file) as f:
            jobs += [line.strip() for line in f if line.strip() and not line.startswith("#")]
    return jobs


def parse_overrides(items):
    out = []
    for item in items:
        pattern, _, secs = item.rpartition("=")
        if not pattern:
            raise ValueError(f"--set takes GLOB=SECONDS, not '{item}'")
        out.append((pattern, float(secs)))
    return out


def read_shard_dir(d):
    """(spec or None, summary dict or None, report paths) of one shard's out dir."""
    spec = None
    try:
        with open(os.path.join(d, "shard.txt")) as f:
            spec = f.read().split()[0]
    except (OSError, IndexError):
        pass
    summary = None
    try:
        with open(os.path.join(d, "summary-gpu.json")) as f:
            summary = json.load(f)
    except (OSError, ValueError):
        pass
    if summary and not spec:
        spec = summary.get("shard")
    return spec, summary, sorted(glob.glob(os.path.join(d, "xml", "*.xml")))


def merge(dirs, out, known_failures=None, tier="gpu", expect=None):
    """Merge shard out dirs into one summary in OUT; returns the exit status (1: new failure)."""
    ledger = summarize.read_ledger(known_failures)
    suites, origin, where, shard_of, durations = {}, {}, {}, {}, {}
    shards, notes, seen = [], [], {}
    for d in dirs:
        spec, summary, reports = read_shard_dir(d)
        label = spec or d
        entry = {"dir": os.path.abspath(d), "shard": spec}
        if spec:
            seen.setdefault(spec, []).append(d)
        if summary is None:
            entry["status"] = "no summary (the shard did not finish)"
            suites.setdefault(f"shard {label}", []).append(
                ("(shard)", "failed", f"{d}: no summary-gpu.json: the shard did not finish"))
            shards.append(entry)
            continue
        try:
            with open(os.path.join(d, "shard.txt")) as f:
                entry["host"] = f.read().split()[1]
        except (OSError, IndexError):
            pass
        entry.update(status="finished", totals=summary.get("totals"),
                     jobs=sorted(summarize.suite_name(r) for r in reports))
        for r in reports:
            s = summarize.suite_name(r)
            if s in origin and origin[s] != label:
                notes.append(f"job {s} ran in shards {origin[s]} and {label} (both counted)")
            origin.setdefault(s, label)
            suites.setdefault(s, []).extend(summarize.read_cases(r))
        for job, gpu in (summary.get("where") or {}).items():
            where[job] = gpu
            shard_of[job] = label
        for job, secs in (summary.get("durations") or {}).items():
            durations[job] = secs
        for n in summary.get("notes") or []:
            notes.append(f"shard {label}: {n}")
        shards.append(entry)
    for spec, ds in sorted(seen.items()):
        if len(ds) > 1:
            suites.setdefault(f"shard {spec}", []).append(
                ("(shard)", "failed", f"shard {spec} given twice: {', '.join(ds)}"))
    if expect:
        for i in range(expect):
            if f"{i}/{expect}" not in seen:
                suites.setdefault(f"shard {i}/{expect}", []).append(
                    ("(shard)", "failed", f"no results for shard {i}/{expect}"))
        for spec in seen:
            if not spec.endswith(f"/{expect}"):
                notes.append(f"shard {spec} is not one of {expect} shards")
    for s in suites:
        if s in origin:
            shard_of.setdefault(s, origin[s])
    props = {s: {k: str(v) for k, v in (("gpu", where.get(s)), ("shard", origin.get(s)))
                 if v is not None}
             for s in suites}
    notes.insert(0, f"merged {len(dirs)} shard dirs"
                    + (f" (expected {expect} shards)" if expect else ""))
    extra = {"shards": shards, "where": where, "shard_of": shard_of, "durations": durations}
    return summarize.summarize(suites, out, tier=tier, notes=notes, ledger=ledger, extra=extra,
                               properties=props)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("plan", "table"):
        p = sub.add_parser(name)
        if name == "plan":
            p.add_argument("--shard", required=True, help="I/N")
        else:
            p.add_argument("--shards", type=int, required=True)
        p.add_argument("--durations", default=None)
        p.add_argument("--set", action="append", default=[], metavar="GLOB=SECONDS")
        p.add_argument("--jobs-file", default=None)
        p.add_argument("jobs", nargs="*")
    m = sub.add_parser("merge")
    m.add_argument("--out", required=True)
    m.add_argument("--known-failures", default=None)
    m.add_argument("--tier", default="gpu")
    m.add_argument("--expect", type=int, default=None, help="N: every shard 0..N-1 must be there")
    m.add_argument("dirs", nargs="+")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "merge":
            return merge(a.dirs, a.out, a.known_failures, a.tier, a.expect)
        i, n = parse_spec(a.shard) if a.cmd == "plan" else (None, a.shards)
        jobs = read_jobs(a)
        shards, loads, cost = plan(jobs, n, load_durations(a.durations), parse_overrides(a.set))
    except (ValueError, OSError) as e:
        print(f"shard.py: {e}", file=sys.stderr)
        return 2
    total = sum(loads)
    if a.cmd == "plan":
        for j in shards[i]:
            print(j)
        print(f"shard {i}/{n}: {len(shards[i])} of {len(set(jobs))} jobs, about {loads[i]:.0f} s"
              f" of {total:.0f} s", file=sys.stderr)
    else:
        for k, (js, load) in enumerate(zip(shards, loads)):
            print(f"shard {k}/{n}  {load:8.0f} s  " + " ".join(js))
    return 0


if __name__ == "__main__":
    sys.exit(main())
