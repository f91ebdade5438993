"""Offline stub of rules_java: the native Java rules under their rules_java names (what
@bazel_tools loads from it; this project builds no Java)."""
java_binary = native.java_binary
java_import = native.java_import
java_library = native.java_library
java_proto_library = native.java_proto_library
java_runtime = native.java_runtime
java_toolchain = native.java_toolchain
