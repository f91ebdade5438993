"""tools/sanitize_set.tsv against the GPU test binaries it names, with Criterion's own filter
(each binary run on its rows' filters with --verbose: a case its filter selects prints `[RUN ]`,
one it leaves out `Test is disabled`; without a GPU a selected case then skips itself):
  - the set names every GPU test binary given, and nothing else;
  - every row selects at least one case: a filter that matches nothing would sanitize nothing,
    and its step would still pass;
  - the parts of one binary (rows with a part name) are disjoint: a case in two parts would run
    twice under each tool;
  - the mutation pass's golden-suite sets narrowed to one kernel's stage (mutate.py's
    stage_case_filter, for each stage of KERNEL_CHECKS) select a case of the stage in a suite
    that the kernel's file sanitizes, and only cases of the suite's whole set.
usage: sanitize_set_test.py SET.tsv BINARY...   (on a GPU host the selected cases really run)"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sanitize_report import read_set  # noqa: E402
import mutate  # noqa: E402


def selected(binary, filt):
    r = subprocess.run([binary, "--jobs", "2", "--verbose", "--always-succeed", f"--filter={filt}"],
                       capture_output=True, text=True, timeout=600)
    return set(re.findall(r"^\[RUN \] (\S+)$", r.stdout + r.stderr, re.M))


def main():
    tsv, binaries = sys.argv[1], sys.argv[2:]
    by_name = {os.path.basename(b): b for b in binaries}
    rows = read_set(tsv)
    problems = []
    named = {b for b, _, _ in rows}
    if named != set(by_name):
        problems.append(f"the set names {sorted(named - set(by_name))} beyond the GPU test "
                        f"binaries, and lacks {sorted(set(by_name) - named)}")
    cases = {}
    for b, filt, key in rows:
        if b not in by_name:
            continue
        cases[key] = selected(by_name[b], filt)
        print(f"{key:40s} {len(cases[key]):4d} cases  {filt}")
        if not cases[key]:
            problems.append(f"{key}: the filter {filt!r} selects no case")
    for b in sorted(named):
        keys = [k for bb, _, k in rows if bb == b and k in cases]
        for i, k1 in enumerate(keys):
            for k2 in keys[i + 1:]:
                both = sorted(cases[k1] & cases[k2])
                if both:
                    problems.append(f"{k1} and {k2} both select {len(both)} cases: {both[:5]}")
        if len(keys) > 1:
            print(f"{b}: {len(keys)} parts, {len(set().union(*(cases[k] for k in keys)))} cases")
    stages = {}  # (file, stage tuple): the kernel prefixes mapped to it
    for f in mutate.FILE_CHECKS:
        for prefix, _ in mutate.KERNEL_CHECKS:
            st = mutate.own_stage(f, prefix)
            if st:
                stages.setdefault((f, tuple(st)), []).append(prefix)
    for (f, st), prefixes in sorted(stages.items()):
        hit = 0
        for b in mutate.GOLDEN_SUITES:
            if b not in by_name or b not in mutate.FILE_SANITIZE.get(f, []):
                continue
            whole = set().union(*(cases[k] for bb, _, k in rows if bb == b and k in cases))
            filt = mutate.stage_case_filter(list(st), [x for bb, x, _ in rows if bb == b])
            got = selected(by_name[b], filt)
            hit += sum(1 for c in got if c.split("__")[-1] in st)
            if got - whole:
                problems.append(f"{f} {st}: {filt!r} on {b} selects {sorted(got - whole)[:5]} "
                                f"beyond the suite's set")
        print(f"{f} {'+'.join(st):40s} {hit:4d} stage cases")
        if not hit:
            problems.append(f"{f} {st} (kernels {prefixes}): no sanitized golden suite has a case")
    for p in problems:
        print("FAIL:", p)
    print(f"{len(rows)} case sets, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
