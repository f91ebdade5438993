/* mla_status.c: status codes to messages. The contract table here is the single source of
 * docs/contract.md (tools/contract_table prints it; a test keeps the two equal). */
#include "kernels/mla_status.h"
#include "kernels/mla_status_table.h"

#include <stdio.h>

const mla_contract_entry mla_contract_table[] = {
    {MLA_E_ODD_ROPE, "MLA_E_ODD_ROPE", "rope_interleaved, attn_absorbed, attn_gathered",
     "d_rope must be even (interleaved rope rotates (2j, 2j+1) pairs)"},
    {MLA_E_RANK_TOO_BIG, "MLA_E_RANK_TOO_BIG",
     "absorb_q(_split), decompress_v(_split), attn_absorbed, attn_gathered",
     "kv_rank exceeds the kernel's MLA_MAX_RANK shared-memory ceiling"},
    {MLA_E_ROPE_TOO_BIG, "MLA_E_ROPE_TOO_BIG", "rope_interleaved, attn_absorbed, attn_gathered",
     "d_rope exceeds the kernel's MLA_MAX_ROPE ceiling"},
    {MLA_E_TQ_GT_TKV, "MLA_E_TQ_GT_TKV", "attn_absorbed",
     "t_q > t_kv (queries must be a suffix of the latent cache)"},
    {MLA_E_POOL_RANGE, "MLA_E_POOL_RANGE", "kpool_pool_keys, kpool_score(_ref), kpool_select(_ref)",
     "k-pool size out of range (1..=MLA_MAX_POOL)"},
    {MLA_E_INDEX_HEADS_RANGE, "MLA_E_INDEX_HEADS_RANGE", "kpool_score(_ref)",
     "indexer head count out of range (1..=1024, one thread per head)"},
    {MLA_E_GRID_CONTRACT, "MLA_E_GRID_CONTRACT",
     "kpool_score(_ref), kpool_select(_ref); mla_bf16_transpose_heads (door helper: batch or "
     "row tiles over the grid.z / grid.y ceiling of 65535)",
     "t_q * n_pools exceeds the grid.x contract"},
    {MLA_E_EMPTY_CANDIDATES, "MLA_E_EMPTY_CANDIDATES", "kpool_select(_ref)",
     "always_select_tail=false: queries before the first complete pool would have an empty "
     "candidate set"},
    {MLA_E_WIDTH_TOO_NARROW, "MLA_E_WIDTH_TOO_NARROW", "kpool_select(_ref)",
     "index-list width is narrower than select_k * pool + pool - 1"},
    {MLA_E_EMPTY_GATHER, "MLA_E_EMPTY_GATHER", "attn_gathered",
     "empty gathered candidate list (n_slots == 0: a zero softmax denominator)"},
    {MLA_E_RING_NOT_POOL_MULTIPLE, "MLA_E_RING_NOT_POOL_MULTIPLE", "kpool_pool_keys",
     "indexer ring size (state_rows) is not a multiple of the pool"},
    {MLA_E_INDEX_DIM, "MLA_E_INDEX_DIM", "kpool_pool_keys, kpool_score(_ref)",
     "indexer head dim must be positive"},
    {MLA_E_RING_OVERWRITTEN, "MLA_E_RING_OVERWRITTEN", "kpool_pool_keys",
     "a pool to build has rows the tail ring already overwrote "
     "(pool_begin * pool < n_pools * pool - state_rows)"},
    {MLA_E_NULL_POINTER, "MLA_E_NULL_POINTER", "all", "a required buffer pointer is NULL"},
    {MLA_E_NONPOSITIVE_EXTENT, "MLA_E_NONPOSITIVE_EXTENT", "all",
     "an extent that must be >= 1 (t, t_q, t_kv, n_head, kv_rank, d_nope, d_v, n_pos, n_vec, wa, "
     "select_k, width, m, n, k, batch) is zero or negative"},
    {MLA_E_NEGATIVE_ARG, "MLA_E_NEGATIVE_ARG", "all but absorb_q / decompress_v / bf16_gemm_sb",
     "an offset, position, count or ring size that may be 0 (slot, d_rope, wb, rows, pool_begin, "
     "n_pools, state_rows, first_pos, n_slots) is negative"},
    {MLA_E_SPLIT_RANGE, "MLA_E_SPLIT_RANGE", "absorb_q_split, decompress_v_split",
     "split outside 1..=the per-block output range (kv_rank for absorb, d_v for decompress)"},
    {MLA_E_INDEX_OVERFLOW, "MLA_E_INDEX_OVERFLOW", "all",
     "an element count or offset exceeds the 32-bit index range (2^62 for bf16_gemm_sb)"},
    {MLA_E_POOL_BEGIN_RANGE, "MLA_E_POOL_BEGIN_RANGE", "kpool_pool_keys", "pool_begin > n_pools"},
    {MLA_E_ALIAS, "MLA_E_ALIAS", "all", "an output buffer overlaps an input buffer"},
    {MLA_E_RING_SELF_OVERLAP, "MLA_E_RING_SELF_OVERLAP", "index_append_ring",
     "t > rows: one append would write a ring row twice"},
    {MLA_E_GEMM_STRIDE, "MLA_E_GEMM_STRIDE", "bf16_gemm_sb",
     "GEMM row stride below the row length (x_rs < k or y_rs < n) or a negative batch stride"},
    {MLA_E_QUERY_BEYOND_POOLS, "MLA_E_QUERY_BEYOND_POOLS", "kpool_score(_ref), kpool_select(_ref)",
     "a query would see a complete pool that is not listed "
     "(first_pos + t_q - 1 >= (n_pools + 1) * pool - 1)"},
    {MLA_E_INDEX_DIM_TOO_BIG, "MLA_E_INDEX_DIM_TOO_BIG", "kpool_pool_keys, kpool_score(_ref)",
     "indexer head dim exceeds MLA_MAX_INDEX_DIM"},
    {MLA_E_BAD_ROPE_BASE, "MLA_E_BAD_ROPE_BASE", "rope_interleaved",
     "rope base must be finite and > 0"},
    {MLA_E_BAD_SCALE, "MLA_E_BAD_SCALE", "attn_absorbed, attn_gathered, kpool_score(_ref)",
     "a scale argument (scale, qk_scale, head_scale) is not finite"},
    {MLA_E_BAD_FLAG, "MLA_E_BAD_FLAG", "kpool_select(_ref), bf16_gemm_sb",
     "a 0/1 flag (always_tail, y_is_bf16) has another value"},
    {MLA_E_HEAD_DIM_TOO_BIG, "MLA_E_HEAD_DIM_TOO_BIG", "absorb_q(_split), decompress_v(_split)",
     "d_nope / d_v exceeds MLA_MAX_HEAD_DIM"},
};
const int mla_contract_table_len = (int)(sizeof mla_contract_table / sizeof mla_contract_table[0]);

static const mla_contract_entry *find(int status) {
    for (int i = 0; i < mla_contract_table_len; i++)
        if (mla_contract_table[i].code == status) return &mla_contract_table[i];
    return NULL;
}

int mla_status_is_contract(int status) { return find(status) != NULL; }

const char *mla_status_name(int status) {
    const mla_contract_entry *e = find(status);
    if (e) return e->name;
    if (status == MLA_OK) return "MLA_OK";
    if (status >= 10000 && status < 20000) return "CUDA";
    if (status >= 20000 && status < 30000) return "LT_DECLINE";
    if (status >= 30000 && status < 40000) return "CUBLAS_FAIL";
    return "UNKNOWN";
}

const char *mla_status_message(int status) {
    static _Thread_local char buf[160];
    const mla_contract_entry *e = find(status);
    if (e) return e->message;
    if (status == MLA_OK) return "ok";
    if (status >= 10000 && status < 20000) {
        const char *what = status == 10035   ? " (no driver: CUDA driver version is insufficient)"
                           : status == 10100 ? " (no CUDA-capable device)"
                                             : "";
        snprintf(buf, sizeof buf, "CUDA runtime error: cudaError_t %d%s", status - 10000, what);
    } else if (status >= 20000 && status < 30000) {
        snprintf(buf, sizeof buf,
                 "cuBLASLt declined the shape (no heuristic; cublasStatus_t %d): the caller may "
                 "fall back",
                 status - 20000);
    } else if (status >= 30000 && status < 40000) {
        snprintf(buf, sizeof buf, "cuBLAS failure (cublasStatus_t %d): not a decline",
                 status - 30000);
    } else if (status >= 40000 && status < 50000) {
        snprintf(buf, sizeof buf, "unknown contract code %d", status);
    } else {
        snprintf(buf, sizeof buf, "unknown status %d", status);
    }
    return buf;
}
