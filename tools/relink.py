#!/usr/bin/env python3
"""relink.py: the relink-only loop on a GPU host (docs/relink.md). Recompiles changed kernel
sources with the Bazel build's nvcc flags and relinks, with the host's g++, every bundled test
binary, benchmark and fuzzer that uses them. Needs nvcc, g++ and ar; no Bazel, clang or Criterion.

  python3 relink/relink.py [--bundle DIR] [--jobs N] FILE.cu ...
      FILE.cu: a patched kernel source (e.g. a copy of kernels/mla_attn.cu); it replaces
      relink/src/kernels/<basename> (the name must be one of the bundle's kernel sources).
  python3 relink/relink.py --dry-run ...     print the commands only
  --all: recompile every kernel source and relink everything; --libdir DIR: where the bundle's
  shared libraries were unpacked (run-gpu-tier.sh passes $OUT/lib).

Prints one line per compile and link with its seconds, then `relink: N sources compiled, M
binaries relinked in S s`. Exit 0, or 1 when a compile or link failed (its output printed; the
old binary stays in place), 2 on bad arguments.
"""
import argparse
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def log(msg):
    print(msg, flush=True)


def compile_one(rl, cfg, src, args, dry):
    out = os.path.join(rl, "kobj", cfg, os.path.basename(src)[:-3] + ".o")
    cmd = [a.replace("{src}", os.path.join("src", src)).replace("{out}", out + ".new")
           for a in args]
    # the Bazel action ran at the repository root with -I. (kernels/...) and -Ibazel-out/...
    cmd = [("-I" + os.path.join(rl, "src")) if a == "-I." else a for a in cmd]
    cmd = [a for a in cmd if not a.startswith("-Ibazel-out")]
    if dry:
        return src, cfg, 0.0, " ".join(cmd), 0
    t0 = time.time()
    p = subprocess.run(cmd, cwd=rl, capture_output=True, text=True)
    if p.returncode == 0:
        os.replace(out + ".new", out)
    return src, cfg, time.time() - t0, p.stdout + p.stderr, p.returncode


def libdir(bundle, tmp, extra):
    """-L dir with unversioned names for the bundle's lib/*.so.N (libcriterion.so -> .so.3)."""
    d = os.path.join(tmp, "linkdeps")
    os.makedirs(d, exist_ok=True)
    for lib_root in ([extra] if extra else []) + [os.path.join(bundle, "out", "lib"),
                                                  os.path.join(bundle, "lib")]:
        if not os.path.isdir(lib_root):
            continue
        for f in os.listdir(lib_root):
            if ".so." in f:
                # the unversioned name for -l, and the file's own name for the libraries'
                # DT_NEEDED (libcriterion.so.3 needs libnanomsg.so.5, libgit2.so.1.5), which
                # -rpath-link resolves here: a GPU host has none of them in /usr/lib
                for name in (f.split(".so.")[0] + ".so", f):
                    link = os.path.join(d, name)
                    if not os.path.lexists(link):
                        os.symlink(os.path.join(lib_root, f), link)
    return d


def link_one(rl, bundle, name, spec, tmp, dry, deps):
    work = tempfile.mkdtemp(dir=tmp)
    cmd = ["g++", "-o", os.path.join(bundle, name) + ".new"]
    if spec["config"] == "fuzz":
        cmd.append("-pie")
    ar = []

    def tok(t):
        for k, d in (("@O/", os.path.join(rl, "objs")),
                     ("@K/", os.path.join(rl, "kobj", spec["config"])),
                     ("@RT/", os.path.join(rl, "rt"))):
            t = t.replace(k, d + "/")
        return t

    n = 0
    for t in spec["args"]:
        if isinstance(t, list):  # a --start-lib group: an archive (same pull-in semantics)
            n += 1
            a = os.path.join(work, f"group{n}.a")
            ar.append(["ar", "rcs", a] + [tok(m) for m in t[1:]])
            cmd.append(a)
        elif t.startswith("-l") or t.endswith((".o", ".a")) or t.startswith("-L"):
            cmd.append(tok(t))
        else:
            cmd.append("-Wl," + tok(t))
    cmd += ["-L" + deps, "-Wl,-rpath-link," + deps]
    if dry:
        return name, 0.0, "\n".join(" ".join(c) for c in ar + [cmd]), 0
    t0 = time.time()
    for c in ar:
        p = subprocess.run(c, capture_output=True, text=True)
        if p.returncode:
            return name, time.time() - t0, p.stdout + p.stderr, p.returncode
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode == 0:
        os.chmod(os.path.join(bundle, name) + ".new", 0o755)
        os.replace(os.path.join(bundle, name) + ".new", os.path.join(bundle, name))
    return name, time.time() - t0, p.stdout + p.stderr, p.returncode


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--bundle", default=os.path.dirname(HERE))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--libdir", default=None, help="the bundle's shared libraries (unpacked "
                    "lib.tar.xz; default: BUNDLE/out/lib or BUNDLE/lib)")
    ap.add_argument("--all", action="store_true", help="recompile and relink everything")
    ap.add_argument("--only", default=None, help="comma-separated binaries (bin/NAME) to relink; "
                    "only their configs are compiled (tools/mutate.py)")
    a = ap.parse_args(argv)
    bundle = os.path.abspath(a.bundle)
    rl = os.path.join(bundle, "relink")
    with open(os.path.join(rl, "nvcc.json")) as f:
        nvcc = json.load(f)
    with open(os.path.join(rl, "links.json")) as f:
        links = json.load(f)
    srcs = {os.path.basename(s): s for cfg in nvcc.values() for s in cfg}
    changed = set()
    for f in a.files:
        b = os.path.basename(f)
        if b not in srcs:
            print(f"relink: {f}: not a kernel source of the bundle ({', '.join(sorted(srcs))})",
                  file=sys.stderr)
            return 2
        if not os.path.isfile(f):
            print(f"relink: {f}: no such file", file=sys.stderr)
            return 2
        dst = os.path.join(rl, "src", srcs[b])
        if os.path.abspath(f) != os.path.abspath(dst):
            shutil.copy(f, dst)
        changed.add(srcs[b])
    if a.all:
        changed = set(srcs.values())
    if not changed:
        log("relink: nothing to do (pass patched kernel sources, or --all)")
        return 0
    if a.only:
        want = {b if b.startswith("bin/") else "bin/" + b for b in a.only.split(",") if b}
        unknown = want - set(links)
        if unknown:
            print(f"relink: --only: not relinkable here: {', '.join(sorted(unknown))}",
                  file=sys.stderr)
            return 2
        links = {k: v for k, v in links.items() if k in want}
        nvcc = {c: m for c, m in nvcc.items() if any(v["config"] == c for v in links.values())}
    t_all = time.time()
    jobs = [(cfg, s, args) for cfg, m in nvcc.items() for s, args in m.items() if s in changed]
    rc = 0
    with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for src, cfg, dt, out, r in ex.map(lambda j: compile_one(rl, j[0], j[1], j[2], a.dry_run),
                                          jobs):
            log(f"relink: nvcc {src} ({cfg}) {'ok' if r == 0 else 'FAILED'} {dt:.1f} s")
            if r or a.dry_run:
                print(out, file=sys.stderr if r else sys.stdout)
                rc = rc or (1 if r else 0)
    if rc:
        return rc
    objs = {os.path.basename(s)[:-3] + ".o" for s in changed}
    todo = [(n, s) for n, s in sorted(links.items()) if objs & set(s["kernel_objects"])]
    with tempfile.TemporaryDirectory() as tmp:
        deps = libdir(bundle, tmp, a.libdir)
        failed = 0
        with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            for name, dt, out, r in ex.map(
                    lambda j: link_one(rl, bundle, j[0], j[1], tmp, a.dry_run, deps), todo):
                log(f"relink: link {name} {'ok' if r == 0 else 'FAILED'} {dt:.1f} s")
                failed += 1 if r else 0
                if r or a.dry_run:
                    print(out, file=sys.stderr if r else sys.stdout)
                    rc = rc or (1 if r else 0)
    log(f"relink: {len(jobs)} sources compiled, {len(todo) - failed} binaries relinked"
        + (f", {failed} links FAILED (their old binaries kept)" if failed else "")
        + f" in {time.time() - t_all:.1f} s" + (" (dry run)" if a.dry_run else ""))
    return rc


if __name__ == "__main__":
    sys.exit(main())
