"""tools/relink_test.py: the relink-only loop (tools/relink.py, docs/relink.md) on a planted
mini-bundle: a kernel source compiled by nvcc, a host object, a --start-lib group and a link line
in the relink_pack.py form. No GPU needed (the kernel's host function is what runs).

  - a patched kernel source is recompiled with the recorded nvcc arguments and every binary that
    uses its object is relinked: the new binary prints the patched value;
  - a binary that does not use the object is not relinked;
  - a compile error exits 1, prints nvcc's message and leaves the old binary in place;
  - an unknown source name exits 2; --dry-run prints the commands and changes nothing;
  - a source in two configs (the product build and the test-only shake build, which adds a
    define) is compiled with each config's own arguments, and each binary links its config's
    object;
  - a library of the bundle's lib/ whose own DT_NEEDED libraries exist only there (libcriterion
    needs libnanomsg.so.5 and libgit2.so.1.5, which a GPU host lacks) still links.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pycheck import main, test  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NVCC = "/usr/local/cuda/bin/nvcc"
KERNEL = """#include <cuda_runtime.h>
__global__ void k_fill(int *p) { p[threadIdx.x] = VALUE; }
#if defined(K_SHAKE)
extern "C" int k_value(void) { return 100 + VALUE; }
#else
extern "C" int k_value(void) { return VALUE; }
#endif
"""
MAIN = '#include <stdio.h>\nint k_value(void);\nint helper(int);\n' \
    'int main(void) { printf("%d\\n", helper(k_value())); return 0; }\n'
HELPER = "int helper(int x) { return 10 * x; }\n"
OTHER = '#include <stdio.h>\nint main(void) { puts("other"); return 0; }\n'


def sh(*cmd, cwd=None):
    p = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True)
    assert p.returncode == 0, (cmd, p.stdout, p.stderr)
    return p.stdout


def planted(root):
    rl = os.path.join(root, "relink")
    for d in ("src/kernels", "kobj/fastbuild", "objs/bazel-out", "rt"):
        os.makedirs(os.path.join(rl, d))
    os.makedirs(os.path.join(root, "bin"))
    with open(os.path.join(rl, "src/kernels/k.cu"), "w") as f:
        f.write(KERNEL.replace("VALUE", "1"))
    nvcc_args = [NVCC, "-std=c++17", "-O3", "-gencode=arch=compute_90,code=sm_90", "-Xcompiler",
                 "-fPIC", "-I.", "-Ibazel-out/k8-fastbuild/bin", "-c", "{src}", "-o", "{out}"]
    with open(os.path.join(rl, "nvcc.json"), "w") as f:
        json.dump({"fastbuild": {"kernels/k.cu": nvcc_args}}, f)
    sh(NVCC, "-std=c++17", "-O3", "-gencode=arch=compute_90,code=sm_90", "-Xcompiler", "-fPIC",
       "-c", os.path.join(rl, "src/kernels/k.cu"), "-o", os.path.join(rl, "kobj/fastbuild/k.o"))
    for name, text in (("main", MAIN), ("helper", HELPER), ("other", OTHER)):
        src = os.path.join(root, name + ".c")
        with open(src, "w") as f:
            f.write(text)
        sh("gcc", "-fPIC", "-c", src, "-o", os.path.join(rl, "objs/bazel-out", name + ".o"))
    cuda = ["-L/usr/local/cuda/lib64", "-lcudart", "-rpath", "/usr/local/cuda/lib64"]
    links = {
        "bin/app": {"config": "fastbuild", "kernel_objects": ["k.o"],
                    "args": ["@O/bazel-out/main.o", ["@LIB", "@O/bazel-out/helper.o"],
                             ["@LIB", "@K/k.o"], *cuda]},
        "bin/other": {"config": "fastbuild", "kernel_objects": [],
                      "args": ["@O/bazel-out/other.o"]},
    }
    with open(os.path.join(rl, "links.json"), "w") as f:
        json.dump(links, f)
    shutil.copy(os.path.join(HERE, "relink.py"), os.path.join(rl, "relink.py"))
    for b in ("app", "other"):  # the "old" binaries
        with open(os.path.join(root, "bin", b), "w") as f:
            f.write("#!/bin/sh\necho old\n")
        os.chmod(os.path.join(root, "bin", b), 0o755)
    return rl


def relink(root, *args):
    p = subprocess.run([sys.executable, os.path.join(root, "relink", "relink.py"), "--bundle",
                        root, "--jobs", "2", *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def run(root, b):
    return sh(os.path.join(root, "bin", b)).strip()


def patched_kernel(root, value):
    """A patched copy of the kernel source with VALUE replaced; returns its path."""
    path = os.path.join(root, "k.cu")
    with open(path, "w") as f:
        f.write(KERNEL.replace("VALUE", value))
    return path


@test
def a_patched_kernel_is_recompiled_and_its_binaries_relinked():
    with tempfile.TemporaryDirectory() as root:
        planted(root)
        rc, out, err = relink(root, patched_kernel(root, "7"))
        assert rc == 0, (out, err)
        assert "relink: nvcc kernels/k.cu (fastbuild) ok" in out, out
        assert "relink: link bin/app ok" in out and "bin/other" not in out, out
        assert "1 sources compiled, 1 binaries relinked" in out, out
        assert run(root, "app") == "70", run(root, "app")  # helper(k_value()) = 10 * 7
        assert run(root, "other") == "old"
        with open(os.path.join(root, "relink/src/kernels/k.cu")) as f:
            assert "7" in f.read()  # the patched source replaced the bundle's


@test
def a_compile_error_keeps_the_old_binary():
    with tempfile.TemporaryDirectory() as root:
        planted(root)
        rc, out, err = relink(root, patched_kernel(root, "undeclared_name"))
        assert rc == 1 and "FAILED" in out and "undeclared_name" in err, (rc, out, err)
        assert run(root, "app") == "old"


@test
def unknown_sources_and_dry_run():
    with tempfile.TemporaryDirectory() as root:
        planted(root)
        other = os.path.join(root, "nope.cu")
        with open(other, "w") as f:
            f.write("\n")
        rc, _, err = relink(root, other)
        assert rc == 2 and "not a kernel source of the bundle" in err, (rc, err)
        rc, out, _ = relink(root, "--dry-run", "--all")
        assert rc == 0 and "(dry run)" in out and "ar rcs" in out and "g++ -o" in out, out
        assert run(root, "app") == "old"


@test
def each_config_compiles_with_its_own_flags_and_links_its_own_object():
    with tempfile.TemporaryDirectory() as root:
        rl = planted(root)
        os.makedirs(os.path.join(rl, "kobj/shake"))
        with open(os.path.join(rl, "nvcc.json")) as f:
            nvcc = json.load(f)
        args = nvcc["fastbuild"]["kernels/k.cu"]
        nvcc["shake"] = {"kernels/k.cu": args[:-4] + ["-DK_SHAKE"] + args[-4:]}
        with open(os.path.join(rl, "nvcc.json"), "w") as f:
            json.dump(nvcc, f)
        with open(os.path.join(rl, "links.json")) as f:
            links = json.load(f)
        links["bin/app_shake"] = dict(links["bin/app"], config="shake")
        with open(os.path.join(rl, "links.json"), "w") as f:
            json.dump(links, f)
        rc, out, err = relink(root, patched_kernel(root, "4"))
        assert rc == 0, (out, err)
        assert "nvcc kernels/k.cu (fastbuild) ok" in out and "nvcc kernels/k.cu (shake) ok" in out
        assert "2 sources compiled, 2 binaries relinked" in out, out
        assert run(root, "app") == "40" and run(root, "app_shake") == "1040", \
            (run(root, "app"), run(root, "app_shake"))
        # --only one binary compiles only its config
        rc, out, err = relink(root, "--only", "app_shake", patched_kernel(root, "5"))
        assert rc == 0 and "(fastbuild)" not in out and "(shake) ok" in out, (out, err)
        assert run(root, "app_shake") == "1050" and run(root, "app") == "40"


@test
def a_bundle_library_needing_another_bundle_library_links():
    # libtop.so.1 calls dep() from libdep.so.2; both only in the bundle's lib/ (as libcriterion
    # and libnanomsg are on a GPU host). Without -rpath-link the executable's link fails with
    # "libtop.so: undefined reference to `dep'" (the H200 run of 2026-12-01).
    with tempfile.TemporaryDirectory() as root:
        rl = planted(root)
        lib = os.path.join(root, "lib")
        os.makedirs(lib)
        for name, text in (("dep", "int dep(void) { return 5; }\n"),
                           ("top", "int dep(void);\nint top(void) { return dep() + 1; }\n")):
            with open(os.path.join(root, name + ".c"), "w") as f:
                f.write(text)
        sh("gcc", "-shared", "-fPIC", "-Wl,-soname,libdep.so.2", "-o",
           os.path.join(lib, "libdep.so.2"), os.path.join(root, "dep.c"))
        sh("gcc", "-shared", "-fPIC", "-Wl,-soname,libtop.so.1", "-o",
           os.path.join(lib, "libtop.so.1"), os.path.join(root, "top.c"),
           os.path.join(lib, "libdep.so.2"))
        src = os.path.join(root, "uses_top.c")  # a main that calls into libtop
        with open(src, "w") as f:
            f.write('#include <stdio.h>\nint k_value(void);\nint top(void);\n'
                    'int main(void) { printf("%d\\n", top() + k_value()); return 0; }\n')
        sh("gcc", "-fPIC", "-c", src, "-o", os.path.join(rl, "objs/bazel-out/uses_top.o"))
        with open(os.path.join(rl, "links.json")) as f:
            links = json.load(f)
        links["bin/app_top"] = {"config": "fastbuild", "kernel_objects": ["k.o"],
                                "args": ["@O/bazel-out/uses_top.o", ["@LIB", "@K/k.o"],
                                         "-L/usr/local/cuda/lib64", "-lcudart", "-ltop"]}
        with open(os.path.join(rl, "links.json"), "w") as f:
            json.dump(links, f)
        rc, out, err = relink(root, patched_kernel(root, "3"))
        assert rc == 0 and "relink: link bin/app_top ok" in out, (rc, out, err)
        assert "2 binaries relinked in" in out and "FAILED" not in out, out
        assert "undefined reference" not in out + err, (out, err)
        env = dict(os.environ, LD_LIBRARY_PATH=lib)
        p = subprocess.run([os.path.join(root, "bin", "app_top")], env=env,
                           capture_output=True, text=True)
        assert p.stdout.strip() == "9", (p.stdout, p.stderr)  # top() = 6, k_value() = 3


if __name__ == "__main__":
    sys.exit(main("relink_test"))
