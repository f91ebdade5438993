/* mla_status.h: the status bands every launcher returns, one named constant per contract code,
 * and the function that turns any status into its message.
 *
 * Bands (an int, never ignored):
 *   0                      ok
 *   10000 + cudaError_t    a CUDA runtime error (10035: no driver, 10100: no device)
 *   20000 + cublasStatus_t cuBLASLt declined the shape (no heuristic): the caller may fall back
 *   30000 + cublasStatus_t a cuBLAS(Lt) failure that is NOT a decline (project addition: a hard
 *                          error must never be mistaken for a fall-back signal)
 *   40000 + n              a contract violation found on the host before any device work
 *
 * Contract codes are append-only and their values are pinned: 40001..40017 are the seed's
 * (mla_ffi.rs) with its exact meanings; 40016 and 40018.. are this project's.
 * docs/contract.md has the full table (code, name, launchers, message).
 */
#ifndef MLA_STATUS_H
#define MLA_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel ceilings the contract codes refer to. */
#define MLA_MAX_RANK 1024           /* kv_rank ceiling (40002) */
#define MLA_MAX_ROPE 128            /* d_rope ceiling (40003) */
#define MLA_MAX_HEAD_DIM 1024       /* d_nope / d_v ceiling (40037) */
#define MLA_MAX_POOL 64             /* k-pool size ceiling (40010) */
#define MLA_MAX_INDEX_HEADS 1024    /* indexer heads ceiling (40011) */
#define MLA_MAX_INDEX_DIM 512       /* indexer head dim ceiling (40033) */
#define MLA_MAX_GRID_X 2147483647LL /* t_q * n_pools ceiling (40012) */

enum mla_status {
    MLA_OK = 0,
    MLA_STATUS_CUDA_BASE = 10000,
    MLA_STATUS_LT_DECLINE_BASE = 20000,
    MLA_STATUS_CUBLAS_FAIL_BASE = 30000,
    MLA_STATUS_CONTRACT_BASE = 40000,

    /* --- the seed's codes (values and meanings pinned) --- */
    MLA_E_ODD_ROPE = 40001,               /* d_rope must be even */
    MLA_E_RANK_TOO_BIG = 40002,           /* kv_rank > MLA_MAX_RANK */
    MLA_E_ROPE_TOO_BIG = 40003,           /* d_rope > MLA_MAX_ROPE */
    MLA_E_TQ_GT_TKV = 40004,              /* t_q > t_kv */
    MLA_E_POOL_RANGE = 40010,             /* pool outside 1..=MLA_MAX_POOL */
    MLA_E_INDEX_HEADS_RANGE = 40011,      /* indexer heads outside 1..=1024 */
    MLA_E_GRID_CONTRACT = 40012,          /* t_q * n_pools over the grid contract */
    MLA_E_EMPTY_CANDIDATES = 40013,       /* always_tail == 0 while a query precedes pool 0's end */
    MLA_E_WIDTH_TOO_NARROW = 40014,       /* width < select_k*pool + pool - 1 */
    MLA_E_EMPTY_GATHER = 40015,           /* n_slots == 0 */
    MLA_E_RING_NOT_POOL_MULTIPLE = 40016, /* ring size not a multiple of the pool */
    MLA_E_INDEX_DIM = 40017,              /* indexer head dim not positive */

    /* --- the project's own (append-only) --- */
    MLA_E_RING_OVERWRITTEN = 40018,   /* pools to build already overwritten by the tail ring */
    MLA_E_NULL_POINTER = 40020,       /* a required pointer is NULL */
    MLA_E_NONPOSITIVE_EXTENT = 40021, /* an extent that must be >= 1 is zero or negative */
    MLA_E_NEGATIVE_ARG = 40022, /* an offset / position / ring size that must be >= 0 is negative */
    MLA_E_SPLIT_RANGE = 40023,  /* split outside 1..=output range */
    MLA_E_INDEX_OVERFLOW = 40024,    /* an element count or offset exceeds INT32_MAX */
    MLA_E_POOL_BEGIN_RANGE = 40025,  /* pool_begin > n_pools */
    MLA_E_ALIAS = 40028,             /* an output buffer overlaps an input buffer */
    MLA_E_RING_SELF_OVERLAP = 40029, /* t > rows: one append would write a ring row twice */
    MLA_E_GEMM_STRIDE = 40030, /* GEMM row stride below the row length, or a negative stride */
    MLA_E_QUERY_BEYOND_POOLS = 40031, /* a query would see a complete pool that is not listed */
    MLA_E_INDEX_DIM_TOO_BIG = 40033,  /* indexer head dim > MLA_MAX_INDEX_DIM */
    MLA_E_BAD_ROPE_BASE = 40034,      /* rope base not finite or not > 0 */
    MLA_E_BAD_SCALE = 40035,          /* a scale argument is not finite */
    MLA_E_BAD_FLAG = 40036,           /* a 0/1 flag has another value */
    MLA_E_HEAD_DIM_TOO_BIG = 40037,   /* d_nope / d_v > MLA_MAX_HEAD_DIM */
};

/* Turns any status into a static, NUL-terminated message ("ok", the contract text, or the band
 * and the underlying CUDA / cuBLAS code). Never returns NULL.
 * @return a pointer to static storage (thread-safe; band messages use thread-local storage). */
const char *mla_status_message(int status);

/* The constant's name ("MLA_E_ODD_ROPE", "MLA_OK", "CUDA", "LT_DECLINE", "CUBLAS_FAIL",
 * or "UNKNOWN"). @return static storage, never NULL. */
const char *mla_status_name(int status);

/* @return 1 when `status` is a contract code this project defines, else 0. */
int mla_status_is_contract(int status);

#ifdef __cplusplus
}
#endif
#endif /* MLA_STATUS_H */
