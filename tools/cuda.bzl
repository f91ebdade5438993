"""cuda_library: compile .cu files with nvcc (sm_90) and wrap the objects in a cc_library.

API (after rules_cuda's, reduced to what this project needs):
  cuda_library(name, srcs, hdrs = [], deps = [], copts = [], host_copts = [])
    srcs:       .cu files, each compiled by one nvcc action to <name>/<file>.o
    hdrs:       headers the .cu files (or the dependents) include; also inputs of every nvcc action
    deps:       cc_library targets linked with the objects (their headers are NOT visible to nvcc:
                list any header a .cu includes in hdrs or in cuda_hdrs)
    cuda_hdrs:  further header files nvcc needs (from other packages)
    copts:      extra nvcc flags
    host_copts: extra host-compiler flags (passed through -Xcompiler)
    cmd_suffix: a string (or a select() of strings) appended to every nvcc command line, each
                value starting with a space: configurable flags, e.g. the test-only bite defines
                of kernels/BUILD (docs/fixtures-that-bite.md); default "" (the command unchanged)
    gencode:    replaces CUDA_GENCODE for these sources (still overridable by
                CUDA_GENCODE_OVERRIDE), e.g. "-gencode=arch=compute_90a,code=sm_90a" for code that
                needs Hopper's arch-specific instructions (wgmma, setmaxnreg); default None
    arch_srcs:  the sources among srcs that need sm_90a (CUDA_GENCODE_ARCH) while the rest keep
                `gencode` or CUDA_GENCODE: the product library's wgmma door arm
                (kernels/mla_attn_wg.cu) beside its sm_90 sources; default [] (also a parameter of
                cuda_ptxas_reports, so each report sees the flags its object is built with)
  The result links statically (linkstatic = True) and depends on @cuda//:cudart.

Architecture: CUDA_GENCODE below (Hopper: sm_90 machine code only; no PTX is embedded, so the
binaries stay small and nothing is JIT-compiled at start), overridable per build with
`--action_env=CUDA_GENCODE_OVERRIDE="-gencode=..."` (e.g. to add PTX for a newer GPU). Objects are
position independent so they can also land in shared libraries.
"""

NVCC = "/usr/local/cuda/bin/nvcc"

CUDA_GENCODE = "-gencode=arch=compute_90,code=sm_90"

# Hopper's arch-specific target (wgmma, setmaxnreg): runs only on sm_90 devices (H100, H200).
CUDA_GENCODE_ARCH = "-gencode=arch=compute_90a,code=sm_90a"

# The product flags every nvcc action here starts with (cuda_library's objects, and the ptxas
# reports of cuda_ptxas_reports, which must see the code the product build compiles).
NVCC_FLAGS = " ".join([
    "-std=c++17 -O3",
    "$${CUDA_GENCODE_OVERRIDE:-" + CUDA_GENCODE + "}",
    "-Xcompiler -fPIC",
])

def cuda_library(name, srcs, hdrs = [], deps = [], cuda_hdrs = [], copts = [], host_copts = [], cmd_suffix = "", gencode = None, arch_srcs = [], **kwargs):
    objs = []
    for src in srcs:
        g = CUDA_GENCODE_ARCH if src in arch_srcs else gencode
        flags = NVCC_FLAGS if g == None else NVCC_FLAGS.replace(CUDA_GENCODE, g)
        base = src.split("/")[-1].rsplit(".", 1)[0]
        out = name + "_objs/" + base + ".o"
        native.genrule(
            name = name + "_" + base + "_nvcc",
            srcs = [src] + hdrs + cuda_hdrs,
            outs = [out],
            cmd = " ".join([
                NVCC,
                flags,
                " ".join(["-Xcompiler " + o for o in host_copts]),
                " ".join(copts),
                "-I. -I$(GENDIR)",
                "-c $(location " + src + ")",
                "-o $@",
            ]) + cmd_suffix,
            message = "nvcc " + src,
        )
        objs.append(out)
    native.cc_library(
        name = name,
        srcs = objs,
        hdrs = hdrs,
        deps = deps + ["@cuda//:cudart"],
        linkstatic = True,
        **kwargs
    )

def cuda_ptxas_reports(name, srcs, hdrs = [], arch_srcs = [], **kwargs):
    """One genrule per source: nvcc with the product flags of cuda_library (no cmd_suffix: never a
    bite or slow define) plus -Xptxas -v, its report written to <name>/<file>.ptxas.txt (the
    object is thrown away); and a filegroup `name` of the reports (tools/ptxas_budget.py)."""
    outs = []
    for src in srcs:
        fname = src.split("/")[-1]
        base = fname.rsplit(".", 1)[0]
        out = name + "/" + fname + ".ptxas.txt"
        native.genrule(
            name = name + "_" + base,
            srcs = [src] + hdrs,
            outs = [out],
            cmd = " ".join([
                "T=$$(mktemp -d) &&",
                NVCC,
                NVCC_FLAGS if src not in arch_srcs else NVCC_FLAGS.replace(CUDA_GENCODE, CUDA_GENCODE_ARCH),
                "-I. -I$(GENDIR)",
                "-Xptxas -v",
                "-c $(location " + src + ")",
                "-o $$T/o.o > $@ 2>&1; rc=$$?; rm -rf $$T;",
                "if [ $$rc -ne 0 ]; then cat $@ >&2; exit $$rc; fi",
            ]),
            message = "nvcc -Xptxas -v " + src,
        )
        outs.append(out)
    native.filegroup(name = name, srcs = outs, **kwargs)
