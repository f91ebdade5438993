"""criterion_test: a Criterion test binary (shared main with JUnit XML) run by `bazel test`."""

def criterion_test(name, srcs, deps = [], data = [], env = {}, size = "small", **kwargs):
    native.cc_test(
        name = name,
        srcs = srcs,
        deps = deps + ["//tests:criterion_main"],
        data = data,
        env = env,
        size = size,
        linkstatic = True,
        **kwargs
    )
