#!/usr/bin/env python3
"""tools/ptxas_budget.py: each kernel's local-memory budget from ptxas, checked on the CPU
(docs/perf-gate.md, "The ptxas budget").

    ptxas_budget.py check  --budget tools/ptxas_budget.tsv REPORT...
    ptxas_budget.py update --budget tools/ptxas_budget.tsv REPORT...

A REPORT is what `nvcc -Xptxas -v` printed while compiling one kernel source with the product
flags (//kernels:ptxas_reports writes one per source, named <source>.ptxas.txt). For every
function ptxas compiled it reads the stack frame and the spill store / load bytes, and the
registers used.

`check` fails (exit 1), naming the function and both numbers, when a function's stack frame or
spill bytes grow past its budget line, when a function has no budget line (a new kernel: add it
with `update`, and say why in the commit), or when a budget line names no compiled function (a
renamed or removed kernel). Registers are printed, never gated: they move with every honest
change. A function under its budget passes with a note, so the budget can be tightened.

Why: a local array indexed at run time, or a spill, turns a register value into a store to local
memory on every trip of a loop, and nothing else on a machine without a GPU sees it. On the H200
(2026-12-01, eleventh session) such a change to the radix select stored the step's 12 scores to
local memory every step: about 528 MB of stores against its 512 MB plane, 22% slower, every byte
of output unchanged. ptxas had reported its stack frame growing from 16 to 64 bytes.
"""
import argparse
import os
import re
import subprocess
import sys

FIELDS = ("stack", "spill_stores", "spill_loads")
HEADER = ("# tools/ptxas_budget.tsv: each kernel function's ptxas budget (tools/ptxas_budget.py;\n"
          "# docs/perf-gate.md). Columns: source, mangled name, stack frame bytes, spill store\n"
          "# bytes, spill load bytes (the three gated), registers (informational), demangled name.\n"
          "# Rewrite with `ptxas_budget.py update`; say in the commit why a number grew.\n")


def stable_name(mangled):
    """The mangled name without the per-build hash of an internal-linkage namespace (nvcc's
    `_INTERNAL_<8 hex>_`, which differs between checkouts; same length, so it still demangles)."""
    return re.sub(r"_INTERNAL_[0-9a-f]{8}_", "_INTERNAL_xxxxxxxx_", mangled)


def parse_report(text):
    """{mangled: {"stack", "spill_stores", "spill_loads", "registers"}} from nvcc -Xptxas -v
    (names through stable_name)."""
    out, cur = {}, None
    text = stable_name(text)
    for line in text.splitlines():
        # a function's block opens with either line (an entry's "Compiling entry function",
        # then "Function properties" for it and for each non-inlined device function)
        m = re.search(r"Function properties for (\S+)|Compiling entry function '([^']+)'", line)
        if m:
            cur = m.group(1) or m.group(2)
            out.setdefault(cur, {"stack": 0, "spill_stores": 0, "spill_loads": 0,
                                 "registers": None})
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                      line)
        if m and cur is not None:
            out[cur].update(stack=int(m.group(1)), spill_stores=int(m.group(2)),
                            spill_loads=int(m.group(3)))
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and cur is not None:
            out[cur]["registers"] = int(m.group(1))
    return out


def source_of(path):
    """The kernel source a report belongs to: its file name without .ptxas.txt."""
    base = os.path.basename(path)
    return base[:-len(".ptxas.txt")] if base.endswith(".ptxas.txt") else base


def read_reports(paths):
    """{(source, mangled): entry} over the reports. A report with no `ptxas info` line at all is
    an error (not built with -Xptxas -v); one whose module has no function (ptxas reports only
    its gmem: kernels/mla_cuda_check.cu) adds nothing."""
    funcs = {}
    for p in paths:
        with open(p) as f:
            text = f.read()
        if "ptxas info" not in text:
            raise SystemExit(f"ptxas_budget: {p}: no `ptxas info` line (not built with "
                             "-Xptxas -v?)")
        for name, e in parse_report(text).items():
            funcs[(source_of(p), name)] = e
    return funcs


def read_budget(path):
    budget = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 5:
                raise SystemExit(f"ptxas_budget: {path}:{n}: expected at least 5 tab-separated "
                                 f"columns, got {len(cols)}")
            budget[(cols[0], cols[1])] = dict(zip(FIELDS, map(int, cols[2:5])))
    return budget


def demangle(names):
    try:
        r = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                           check=True)
        out = r.stdout.splitlines()
        if len(out) == len(names):
            return dict(zip(names, out))
    except (OSError, subprocess.CalledProcessError):
        pass
    return {n: n for n in names}


def check(budget, funcs):
    """(failures, notes): lines naming each function out of its budget, and each under it."""
    fails, notes = [], []
    names = demangle(sorted({k[1] for k in list(funcs) + list(budget)}))
    for key in sorted(funcs):
        src, name = key
        got = funcs[key]
        if key not in budget:
            fails.append(f"{src}: {names[name]} ({name}) has no budget line: stack frame "
                         f"{got['stack']} B, spills {got['spill_stores']} / {got['spill_loads']} "
                         "B (a new kernel: `tools/ptxas_budget.py update`, and say why)")
            continue
        want = budget[key]
        grown = [f for f in FIELDS if got[f] > want[f]]
        if grown:
            fails.append(f"{src}: {names[name]}: " + ", ".join(
                f"{f.replace('_', ' ')} {got[f]} B (budget {want[f]} B)" for f in grown)
                + " -- a runtime-indexed local array or new spills: local-memory traffic "
                "(docs/perf-gate.md, \"The ptxas budget\")")
        elif any(got[f] < want[f] for f in FIELDS):
            notes.append(f"{src}: {names[name]}: under its budget ("
                         + ", ".join(f"{f.replace('_', ' ')} {got[f]} < {want[f]} B"
                                     for f in FIELDS if got[f] < want[f])
                         + "): `update` would tighten it")
    for key in sorted(set(budget) - set(funcs)):
        fails.append(f"{key[0]}: budget line for {names[key[1]]} ({key[1]}) names no compiled "
                     "function (renamed or removed: `tools/ptxas_budget.py update`)")
    return fails, notes


def write_budget(path, funcs):
    names = demangle(sorted({k[1] for k in funcs}))
    with open(path, "w") as f:
        f.write(HEADER)
        for (src, name) in sorted(funcs):
            e = funcs[(src, name)]
            regs = "" if e["registers"] is None else str(e["registers"])
            f.write("\t".join([src, name, str(e["stack"]), str(e["spill_stores"]),
                               str(e["spill_loads"]), regs, names[name]]) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cmd", choices=["check", "update"])
    ap.add_argument("--budget", required=True)
    ap.add_argument("reports", nargs="+")
    a = ap.parse_args(argv)
    funcs = read_reports(a.reports)
    if a.cmd == "update":
        write_budget(a.budget, funcs)
        print(f"ptxas_budget: wrote {len(funcs)} functions to {a.budget}")
        return 0
    fails, notes = check(read_budget(a.budget), funcs)
    for n in notes:
        print("note: " + n)
    for f in fails:
        print("FAIL: " + f)
    print(f"ptxas_budget: {len(funcs)} functions, {len(fails)} out of budget")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
