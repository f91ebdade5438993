"""mla_fuzz_target: one property, two binaries.

  <name>_fuzzer     the libFuzzer binary under `--config=fuzz` (clang, ASan, UBSan); in the default
                    configuration the same sources link the regression driver instead, so
                    `bazel build //...` builds everywhere.
  <name>_regression a test (`bazel test`): the regression driver replays the committed corpus
                    fuzz/corpus/<name>/ through the same entry point, without libFuzzer.
Both link //fuzz:fuzz_gpu (fuzz_gpu.h / fuzz_gpu.c: device detection, the fuzz testbed, the
device buffers of one execution with their checks batched into one synchronisation, per-execution
host arenas; //fuzz:fuzz_values: the Philox fills), in both configurations.
"""

# Pure-CPU helpers of the fuzz targets built, under --config=fuzz, without ASan and without
# libFuzzer's coverage instrumentation (UBSan stays): see docs/fuzzing.md for the measurements and
# .bazelrc (per_file_copt) for the oracle and the comparator.
FUZZ_UNINSTRUMENTED_COPTS = [
    "-fno-sanitize=address",
    "-fno-sanitize=fuzzer-no-link",
]

def mla_fuzz_target(name, srcs, deps = [], data = [], env = {}, size = "small", tags = []):
    common = srcs + ["//fuzz:fuzz_entry.c", "//fuzz:fuzz_helpers.h"]
    deps = deps + ["//fuzz:fuzz_gpu"]
    native.cc_binary(
        name = name + "_fuzzer",
        srcs = common + select({
            "//fuzz:fuzz_mode": [],
            "//conditions:default": ["//fuzz:regression_driver.c"],
        }),
        copts = ["-D_DEFAULT_SOURCE"],
        linkopts = select({
            "//fuzz:fuzz_mode": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        linkstatic = True,
        deps = deps,
        tags = tags,
    )
    native.cc_test(
        name = name + "_regression",
        srcs = common + ["//fuzz:regression_driver.c"],
        copts = ["-D_DEFAULT_SOURCE"],
        args = ["fuzz/corpus/" + name],
        data = native.glob(["corpus/" + name + "/**"]) + data,
        env = env,
        linkstatic = True,
        deps = deps,
        size = size,
        tags = tags,
    )
