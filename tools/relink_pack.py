#!/usr/bin/env python3
"""tools/relink_pack.py BUNDLE_DIR: packs what the GPU host needs to rebuild one kernel source and
relink the binaries that use it, without Bazel, clang or Criterion (docs/relink.md; called by
tools/bundle.sh after the binaries are built; run from the repository root).

BUNDLE_DIR/relink/ gets:
  src/kernels/    the kernel sources and headers (kernels/*.cu, *.h, *.cuh): edit or replace a
                  .cu there, or pass a patched file to `run-gpu-tier.sh --rebuild FILE.cu`;
  nvcc.json       per config ("fastbuild" for tests and benchmarks, "fuzz" for the fuzzers,
                  "shake" for the test-only shake build of //kernels:mla_kernels_shake) and
                  per kernel source: the nvcc arguments of the Bazel action (tools/cuda.bzl), with
                  the source and output as {src} / {out};
  kobj/<config>/  the kernel objects as Bazel built them (a source not rebuilt keeps its object);
  objs/           every other object a link uses (bazel-out paths kept);
  rt/             clang's runtime archives a fuzzer link needs (libFuzzer, ASan) and their .syms;
  links.json      per binary (bin/<name>): the config and the linker-level arguments of its link,
                  objects as "@O/<path>", kernel objects as "@K/<file>", runtime archives as
                  "@RT/<file>", each --start-lib group as ["@LIB", member...] (an archive there).
tools/relink.py (copied beside it) turns these into one g++ command per binary.
"""
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KLIB_OBJS = r"/(mla_kernels(?:_shake)?)_objs/"  # a kernel library's object directory
KOBJ = re.compile(r"^bazel-out/k8-fastbuild(fuzz)?/bin/kernels" + KLIB_OBJS + r"([^/]+\.o)$")
# The kernel libraries and the relink config of each: the product kernels per Bazel config, and
# the test-only shake build (//kernels:mla_kernels_shake, docs/mutation.md), whose objects are
# compiled with their own nvcc flags and linked only by the binaries that name it
KLIBS = {"fastbuild": "mla_kernels", "fuzz": "mla_kernels", "shake": "mla_kernels_shake"}
RT_DIR = re.compile(r"^/usr/lib/llvm-\d+/lib/clang/[^/]+/lib/linux/")
# linker arguments of this machine's toolchain that the host's g++ supplies itself
DROP_EXACT = {"-pie", "--eh-frame-hdr", "--build-id", "-no-pie"}
DROP_WITH_VALUE = {"-m", "-dynamic-linker", "-o"}


def bazel(*args):
    return subprocess.run(["bazel", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout


def link_actions(labels, fuzz):
    """{output path: argument list} of the CppLink actions of the labels."""
    q = 'mnemonic("CppLink", set(%s))' % " ".join(labels)
    out = bazel("aquery", *(["--config=fuzz"] if fuzz else []), q, "--output=jsonproto")
    acts = {}
    arts = {}
    d = json.loads(out)
    frags = {f["id"]: f for f in d.get("pathFragments", [])}

    def path(fid):
        parts = []
        while fid:
            f = frags[fid]
            parts.append(f["label"])
            fid = f.get("parentId")
        return "/".join(reversed(parts))

    for a in d.get("artifacts", []):
        arts[a["id"]] = path(a["pathFragmentId"])
    for a in d.get("actions", []):
        outs = [arts[o] for o in a.get("outputIds", [])]
        binary = [o for o in outs if not o.endswith(".params")][0]
        acts[binary] = [x for x in a["arguments"] if not x.startswith("@")]
    return acts


def nvcc_actions(fuzz):
    """{kernel library: {kernel source: nvcc argument list}} of //kernels' CUDA libraries in that
    config (one aquery serves every library of the config)."""
    out = bazel("aquery", *(["--config=fuzz"] if fuzz else []),
                'mnemonic("Genrule", //kernels:all)', "--output=jsonproto")
    res = {}
    for a in json.loads(out).get("actions", []):
        cmd = a["arguments"][-1]
        m = re.search(r"(/usr/local/cuda/bin/nvcc .*?)$", cmd)
        lib = re.search(KLIB_OBJS, cmd)
        if not m or not lib:
            continue
        args = m.group(1).split()
        src = args[args.index("-c") + 1]
        args[args.index("-c") + 1] = "{src}"
        args[args.index("-o") + 1] = "{out}"
        # the gencode default of tools/cuda.bzl (the action env override is a build-time knob)
        args = [re.sub(r"^\$\{CUDA_GENCODE_OVERRIDE:-(.*)\}$", r"\1", x) for x in args]
        res.setdefault(lib.group(1), {})[src] = args
    return res


def clang_ld_args(args):
    """The linker-level arguments clang passes to ld.lld for this driver command."""
    p = subprocess.run(["clang-14", "-###", *args[1:]], cwd=ROOT, capture_output=True, text=True)
    line = [l for l in p.stderr.splitlines() if "ld.lld" in l or '"/usr/bin/ld' in l][-1]
    toks = re.findall(r'"((?:[^"\\]|\\.)*)"', line)
    return toks[1:]  # without the linker itself


def gcc_ld_args(args):
    """gcc driver arguments as linker-level ones (-Wl,a,b -> a b; -lX, objects kept)."""
    out = []
    for x in args[1:]:
        if x.startswith("-Wl,"):
            out += x[4:].split(",")
        elif x.startswith("-fuse-ld=") or x.startswith("-B") or x == "-pass-exit-codes":
            continue
        else:
            out.append(x)
    return out


def translate(ld, obj_dir, rt_dir, klibs):
    """ld-level args -> the relink form (see the module text); copies the objects it names and
    adds the kernel libraries whose objects it links to the set klibs."""
    res, group = [], None
    i = 0
    while i < len(ld):
        x = ld[i]
        if x in DROP_WITH_VALUE:
            i += 2
            continue
        if x in DROP_EXACT or x.startswith("--hash-style") or re.search(r"/[A-Za-z]?crt[^/]*\.o$", x):
            i += 1
            continue
        if x.startswith("-L") and x != "-L/usr/local/cuda/lib64" and \
                not x.startswith("-L/usr/local/cuda"):
            i += 1
            continue
        if x == "--start-lib":
            group = ["@LIB"]
            i += 1
            continue
        if x == "--end-lib":
            res.append(group)
            group = None
            i += 1
            continue
        m = KOBJ.match(x)
        if m:
            klibs.add(m.group(2))
            tok = "@K/" + m.group(3)
        elif x.startswith("bazel-out/") and x.endswith(".o"):
            dst = os.path.join(obj_dir, x)
            if not os.path.exists(dst):
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy(os.path.join(ROOT, x), dst)
            tok = "@O/" + x
        elif RT_DIR.match(x):
            name = os.path.basename(x)
            shutil.copy(x, os.path.join(rt_dir, name))
            tok = "@RT/" + name
        elif x.startswith("--dynamic-list="):
            f = x.split("=", 1)[1]
            if RT_DIR.match(f):
                shutil.copy(f, os.path.join(rt_dir, os.path.basename(f)))
                tok = "--dynamic-list=@RT/" + os.path.basename(f)
            else:
                tok = x
        else:
            tok = x
        (group if group is not None else res).append(tok)
        i += 1
    return res


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    bundle = os.path.abspath(sys.argv[1])
    rl = os.path.join(bundle, "relink")
    shutil.rmtree(rl, ignore_errors=True)
    for d in ("src/kernels", "kobj/fastbuild", "kobj/fuzz", "kobj/shake", "objs", "rt"):
        os.makedirs(os.path.join(rl, d))
    for f in sorted(os.listdir(os.path.join(ROOT, "kernels"))):
        if f.endswith((".cu", ".h", ".cuh")):
            shutil.copy(os.path.join(ROOT, "kernels", f), os.path.join(rl, "src/kernels", f))
    bins = sorted(os.listdir(os.path.join(bundle, "bin")))
    tests = [b for b in bins if not b.endswith("_fuzzer")]
    fuzzers = [b for b in bins if b.endswith("_fuzzer")]
    labels = {}
    for b in tests:
        for pkg in ("tests", "tools/bench", "tools/golden", "tools"):
            if os.path.exists(os.path.join(ROOT, "bazel-out/k8-fastbuild/bin", pkg, b)):
                labels[b] = f"//{pkg}:{b}"
                break
    flabels = {b: f"//fuzz:{b}" for b in fuzzers}
    links = {}
    by_config = {False: nvcc_actions(False), True: nvcc_actions(True)}
    nvcc = {cfg: by_config[cfg == "fuzz"].get(lib, {}) for cfg, lib in KLIBS.items()}
    for cfg, lab, fuzz in (("fastbuild", labels, False), ("fuzz", flabels, True)):
        if not lab:
            continue
        acts = link_actions(sorted(lab.values()), fuzz)
        for b in sorted(lab):
            out = [o for o in acts if o.endswith("/" + lab[b].split(":")[1])]
            if not out:
                raise SystemExit(f"relink_pack: no link action for {lab[b]}")
            args = acts[out[0]]
            ld = clang_ld_args(args) if "clang" in os.path.basename(args[0]) else \
                gcc_ld_args(args)
            klibs = set()
            form = translate(ld, os.path.join(rl, "objs"), os.path.join(rl, "rt"), klibs)
            uses = sorted({t[3:] for t in _flat(form) if t.startswith("@K/")})
            if not uses:
                continue  # links no kernel object: nothing to relink
            bcfg = cfg
            if KLIBS["shake"] in klibs:  # the shake build's objects: its own config
                if len(klibs) > 1 or fuzz:
                    raise SystemExit(f"relink_pack: {lab[b]} links {sorted(klibs)}: one kernel "
                                     "library a binary")
                bcfg = "shake"
            links["bin/" + b] = {"config": bcfg, "driver_was": os.path.basename(args[0]),
                                 "kernel_objects": uses, "args": form}
    for cfg, m in nvcc.items():
        tree = "k8-fastbuildfuzz" if cfg == "fuzz" else "k8-fastbuild"
        for src in m:
            o = os.path.basename(src)[:-3] + ".o"
            shutil.copy(os.path.join(ROOT, "bazel-out", tree, "bin/kernels", KLIBS[cfg] + "_objs",
                                     o), os.path.join(rl, "kobj", cfg, o))
    with open(os.path.join(rl, "nvcc.json"), "w") as f:
        json.dump(nvcc, f, indent=1)
    with open(os.path.join(rl, "links.json"), "w") as f:
        json.dump(links, f, indent=1)
    shutil.copy(os.path.join(ROOT, "tools", "relink.py"), os.path.join(rl, "relink.py"))
    print(f"relink_pack: {len(links)} binaries ({sum(l['config'] == 'fuzz' for l in links.values())}"
          f" fuzzers), {sum(len(v) for v in nvcc.values())} nvcc actions -> {rl}")
    return 0


def _flat(form):
    for t in form:
        if isinstance(t, list):
            yield from t[1:]
        else:
            yield t


if __name__ == "__main__":
    sys.exit(main())
