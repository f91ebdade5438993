/* bench_json.h: the benchmarks' results as JSON for the nightly ledger (tools/ledger.py
 * read_bench, docs/nightly.md). Plain C (no CUDA), so a CPU test checks it.
 *
 * The file is a JSON list, one object per timed (kernel, shape, arm):
 *   {"kernel": "absorb_q", "shape": "decode", "arm": "split off",
 *    "median_us": 41.2, "p10_us": 40.9, "p90_us": 42.0,          <- what the ledger reads
 *    "samples": 25, "bench": "bench_dense", "gpu": "NVIDIA H200", <- extra, the ledger ignores
 *    "floor_us": 30.1, "read_floor_us": 33.0, "copy_gbs": 4.1e3, "fma_gflops": 6.2e4,
 *    "bytes": ..., "flops": ..., "bytes_identical": true, "finite": true, "note": "...",
 *    "out_sha256": "ba7816bf...f20015ad"}                        <- 64 lowercase hex digits
 * floor_us is the time the run's own ceilings allow: max(bytes / copy, FLOPs / FMA rate).
 * read_floor_us is a plain streaming read of the row's bytes timed the same way (its launch and
 * one-wave ramp included, which the 1 GiB copy ceiling hides).
 * kernel / shape / arm name the row (the ledger keys night-over-night comparisons on
 * kernel/shape/arm, so they must be unique within a run and stable between runs). median_us,
 * p10_us and p90_us come from the per-launch samples (bench_json_set_samples: nearest rank on the
 * sorted samples, index floor(q * n), so the median is sample n / 2 as the tables print it).
 * out_sha256 is the SHA-256 of the bytes of the output tensor the timed launch wrote
 * (bench_json_sha256_hex): the inputs are deterministic fills, so it is a function of the build's
 * kernels, and comparing it row by row (kernel/shape/arm) between two builds' files says whether
 * a change kept every output byte-identical.
 * The optional fields are written only when set (NAN, negative or NULL: left out). */
#ifndef MLA_BENCH_JSON_H
#define MLA_BENCH_JSON_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The environment variable naming the output file (run-gpu-tier.sh sets it per benchmark). */
#define BENCH_JSON_ENV "MLA_BENCH_JSON"

typedef struct {
    const char *kernel; /* required, non-empty */
    const char *shape;  /* NULL: "" */
    const char *arm;    /* NULL: "" */
    double median_us;   /* required, finite and > 0 */
    double p10_us;      /* NAN: null */
    double p90_us;      /* NAN: null */
    int samples;        /* launches timed; <= 0: left out */
    /* optional extras (NAN / negative / NULL: left out) */
    double floor_us;      /* the time the run's measured ceilings allow (roofline floor) */
    double read_floor_us; /* a plain streaming read of `bytes`, timed as the kernel (its size's) */
    double bytes;         /* bytes the kernel must move */
    double flops;         /* FLOPs it must do */
    int bytes_identical;  /* -1: left out; 0 / 1: this arm's output bytes against its base */
    int finite;           /* -1: left out; 0 / 1: every output finite */
    const char *note;     /* free text (the table's A/B column) */
    /* the SHA-256 of the output tensor's bytes (bench_json_sha256_hex): 64 lowercase hex digits */
    const char *out_sha256;
} bench_json_record;

/* A record with every optional field unset. */
bench_json_record bench_json_record_init(const char *kernel, const char *shape, const char *arm);

/* The q-quantile (0 <= q <= 1) of n samples by nearest rank: element floor(q * n) (at most n - 1)
 * of the samples sorted ascending. NAN when n == 0. samples need not be sorted (a copy is). */
double bench_json_quantile(const float *samples, size_t n, double q);

/* Sets median_us, p10_us, p90_us (microseconds) and samples from n per-launch times in ms. */
void bench_json_set_samples(bench_json_record *r, const float *samples_ms, size_t n);

/* hex = the SHA-256 of the n bytes at data as 64 lowercase hex digits and a NUL (OpenSSL
 * EVP_sha256). data may be NULL when n == 0. Should the digest fail, hex is "" (which
 * bench_json_write then refuses as an out_sha256, so a failure cannot pass as a hash). */
void bench_json_sha256_hex(const void *data, size_t n, char hex[65]);

/* Writes the records to path as a JSON list (through path.tmp and a rename, so a failure leaves
 * no partial file). bench ("dense") and gpu (the device name) go into every record when non-NULL;
 * so do the run's ceilings copy_gbs and fma_gflops when > 0. Returns 0, or -1 with a message in
 * err (truncated to errlen) on a bad record, an allocation or an I/O failure. */
int bench_json_write(const char *path, const char *bench, const char *gpu, double copy_gbs,
                     double fma_gflops, const bench_json_record *recs, size_t n, char *err,
                     size_t errlen);

/* bench_json_write to $MLA_BENCH_JSON when it is set and non-empty (else nothing, 0). On failure
 * prints "<bench>: cannot write benchmark JSON ...: <why>" to stderr and returns 1 (the caller's
 * exit status must then be non-zero); on success prints where it wrote to stderr, returns 0. */
int bench_json_write_env(const char *bench, const char *gpu, double copy_gbs, double fma_gflops,
                         const bench_json_record *recs, size_t n);

#ifdef __cplusplus
}
#endif

#endif
