/* mla_door.c: the decode-split and tensor-core prefill doors (kernels/mla_door.h). Host C11. */
#include "kernels/mla_door.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "kernels/mla_validate.h"

static atomic_uint_fast64_t split_dispatches;
static atomic_uint_fast64_t tc_dispatches;

static int env_is_one(const char *name) {
    const char *v = getenv(name);
    return v != NULL && strcmp(v, "1") == 0;
}

int32_t mla_decode_split_policy(int enabled, long blocks, int32_t out_dim) {
    if (!enabled || blocks <= 0 || blocks >= 1024) return 0;
    long want = (1024 + blocks - 1) / blocks;
    long cap = out_dim / 32;
    if (cap < 1) cap = 1;
    long split = want < cap ? want : cap;
    return split > 1 ? (int32_t)split : 0;
}

int32_t mla_decode_split_for(long blocks, int32_t out_dim) {
    return mla_decode_split_policy(env_is_one("MEMRA_MLA_DECODE_SPLIT"), blocks, out_dim);
}

uint64_t mla_decode_split_dispatches(void) { return (uint64_t)atomic_load(&split_dispatches); }

static void split_announce(const char *kind, int32_t t_q, int32_t n_head, int32_t split) {
    if (atomic_fetch_add(&split_dispatches, 1) == 0)
        fprintf(stderr,
                "[mla-decode-split] engaged %s t=%d heads=%d split=%d (output-range split of the "
                "(token, head) blocks; MEMRA_MLA_DECODE_SPLIT=1)\n",
                kind, t_q, n_head, split);
}

int mla_door_absorb_q_f32(const float *q_nope, const float *wk_b, float *q_lat, int32_t t_q,
                          int32_t n_head, int32_t d_nope, int32_t kv_rank, void *stream) {
    /* Validate first so a bad call is refused identically with the door on or off. */
    int rc = mla_validate_absorb_q(q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank, 1);
    if (rc) return rc;
    int32_t split = mla_decode_split_for((long)t_q * n_head, kv_rank);
    if (split > 0) {
        split_announce("absorb_q", t_q, n_head, split);
        return memra_mla_absorb_q_split_f32(q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank,
                                            split, stream);
    }
    return memra_mla_absorb_q_f32(q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank, stream);
}

int mla_door_decompress_v_f32(const float *o_lat, const float *wv_b, float *out, int32_t t_q,
                              int32_t n_head, int32_t d_v, int32_t kv_rank, void *stream) {
    int rc = mla_validate_decompress_v(o_lat, wv_b, out, t_q, n_head, d_v, kv_rank, 1);
    if (rc) return rc;
    int32_t split = mla_decode_split_for((long)t_q * n_head, d_v);
    if (split > 0) {
        split_announce("decompress_v", t_q, n_head, split);
        return memra_mla_decompress_v_split_f32(o_lat, wv_b, out, t_q, n_head, d_v, kv_rank, split,
                                                stream);
    }
    return memra_mla_decompress_v_f32(o_lat, wv_b, out, t_q, n_head, d_v, kv_rank, stream);
}

/* ------------------------------------------------------------ tensor-core prefill -------- */

int mla_tc_prefill_enabled(void) { return env_is_one("MEMRA_MLA_TC_PREFILL"); }

uint64_t mla_tc_prefill_dispatches(void) { return (uint64_t)atomic_load(&tc_dispatches); }

static void tc_announce(const char *kind, int32_t t_q, int32_t n_head) {
    if (atomic_fetch_add(&tc_dispatches, 1) == 0)
        fprintf(stderr,
                "[mla-tc-prefill] engaged %s t=%d heads=%d (bf16 strided-batched GEMM; "
                "MEMRA_MLA_TC_PREFILL=1)\n",
                kind, t_q, n_head);
}

static int is_decline(int rc) { return rc >= 20000 && rc < 30000; }

int mla_door_tc_absorb_q(const float *q_nope, const float *wk_b, const uint16_t *wk_b_t_bf16,
                         float *q_lat, uint16_t *x_bf16, void *ws, size_t ws_bytes, int32_t t_q,
                         int32_t n_head, int32_t d_nope, int32_t kv_rank, void *stream) {
    int rc = mla_validate_absorb_q(q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank, 1);
    if (rc) return rc;
    if (mla_tc_prefill_enabled() && t_q >= MLA_TC_PREFILL_MIN_TQ && wk_b_t_bf16 && x_bf16) {
        rc = mla_f32_to_bf16(q_nope, x_bf16, (int64_t)t_q * n_head * d_nope, stream);
        if (rc) return rc;
        /* per head h: q_lat[i][h][:] (m = t_q, n = kv_rank) = q_nope[i][h][:] (k = d_nope)
         * . wkT[h][kv_rank][d_nope]^T */
        rc = memra_bf16_gemm_sb(wk_b_t_bf16, x_bf16, q_lat, t_q, kv_rank, d_nope,
                                (int64_t)n_head * d_nope, d_nope, (int64_t)n_head * kv_rank,
                                kv_rank, n_head, 0, ws, ws_bytes, stream);
        if (rc == 0) {
            tc_announce("absorb_q", t_q, n_head);
            return 0;
        }
        if (!is_decline(rc)) return rc;
    }
    return mla_door_absorb_q_f32(q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank, stream);
}

int mla_door_tc_decompress_v(const float *o_lat, const float *wv_b, const uint16_t *wv_b_bf16,
                             float *out, uint16_t *x_bf16, void *ws, size_t ws_bytes, int32_t t_q,
                             int32_t n_head, int32_t d_v, int32_t kv_rank, void *stream) {
    int rc = mla_validate_decompress_v(o_lat, wv_b, out, t_q, n_head, d_v, kv_rank, 1);
    if (rc) return rc;
    if (mla_tc_prefill_enabled() && t_q >= MLA_TC_PREFILL_MIN_TQ && wv_b_bf16 && x_bf16) {
        rc = mla_f32_to_bf16(o_lat, x_bf16, (int64_t)t_q * n_head * kv_rank, stream);
        if (rc) return rc;
        /* per head h: out[i][h][:] (m = t_q, n = d_v) = o_lat[i][h][:] (k = kv_rank)
         * . wv_b[h][d_v][kv_rank]^T */
        rc = memra_bf16_gemm_sb(wv_b_bf16, x_bf16, out, t_q, d_v, kv_rank,
                                (int64_t)n_head * kv_rank, kv_rank, (int64_t)n_head * d_v, d_v,
                                n_head, 0, ws, ws_bytes, stream);
        if (rc == 0) {
            tc_announce("decompress_v", t_q, n_head);
            return 0;
        }
        if (!is_decline(rc)) return rc;
    }
    return mla_door_decompress_v_f32(o_lat, wv_b, out, t_q, n_head, d_v, kv_rank, stream);
}

/* --------------------------------------------------------- tensor-core attention -------- */

static atomic_uint_fast64_t tc_attn_dispatches;

int mla_tc_attn_mode(void) {
    const char *v = getenv("MEMRA_MLA_TC_ATTN");
    if (v == NULL) return 0;
    if (strcmp(v, "tf32") == 0) return 1;
    if (strcmp(v, "bf16") == 0) return 2;
    if (strcmp(v, "3xtf32") == 0) return 3;
    if (strcmp(v, "wgmma") == 0) return 4;
    return 0;
}

uint64_t mla_tc_attn_dispatches(void) { return (uint64_t)atomic_load(&tc_attn_dispatches); }

static void tc_attn_announce(const char *kind, int mode, int32_t t_q, int32_t n_head) {
    if (atomic_fetch_add(&tc_attn_dispatches, 1) == 0)
        fprintf(stderr,
                "[mla-tc-attn] engaged %s t=%d heads=%d (%s tensor-core dot products; "
                "MEMRA_MLA_TC_ATTN)\n",
                kind, t_q, n_head,
                mode == 4   ? "bf16 wgmma"
                : mode == 3 ? "3xTF32"
                : mode == 2 ? "bf16"
                            : "TF32");
}

int mla_door_attn_absorbed_f32(const float *q_lat, const float *q_pe, const float *cache,
                               float *o_lat, int32_t n_head, int32_t kv_rank, int32_t d_rope,
                               int32_t t_q, int32_t t_kv, float scale, void *stream) {
    int rc = mla_validate_attn_absorbed(q_lat, q_pe, cache, o_lat, n_head, kv_rank, d_rope, t_q,
                                        t_kv, scale);
    if (rc) return rc;
    int mode = mla_tc_attn_mode();
    if (mode) {
        rc = mla_attn_absorbed_tc_f32(q_lat, q_pe, cache, o_lat, n_head, kv_rank, d_rope, t_q, t_kv,
                                      scale, mode, stream);
        if (rc != MLA_TC_ATTN_DECLINED) {
            if (rc == 0) tc_attn_announce("attn_absorbed", mode, t_q, n_head);
            return rc;
        }
    }
    return memra_mla_attn_absorbed_f32(q_lat, q_pe, cache, o_lat, n_head, kv_rank, d_rope, t_q,
                                       t_kv, scale, stream);
}

int mla_door_attn_gathered_f32(const float *q_lat, const float *q_pe, const float *cache,
                               const int32_t *idx, float *o_lat, int32_t n_head, int32_t kv_rank,
                               int32_t d_rope, int32_t t_q, int32_t n_slots, float scale,
                               void *stream) {
    int rc = mla_validate_attn_gathered(q_lat, q_pe, cache, idx, o_lat, n_head, kv_rank, d_rope,
                                        t_q, n_slots, scale);
    if (rc) return rc;
    int mode = mla_tc_attn_mode();
    if (mode) {
        rc = mla_attn_gathered_tc_f32(q_lat, q_pe, cache, idx, o_lat, n_head, kv_rank, d_rope, t_q,
                                      n_slots, scale, mode, stream);
        if (rc != MLA_TC_ATTN_DECLINED) {
            if (rc == 0) tc_attn_announce("attn_gathered", mode, t_q, n_head);
            return rc;
        }
    }
    return memra_mla_attn_gathered_f32(q_lat, q_pe, cache, idx, o_lat, n_head, kv_rank, d_rope, t_q,
                                       n_slots, scale, stream);
}

/* ------------------------------------------------------ sampled radix selection -------- */

int mla_select_sampled_enabled(void) {
    const char *v = getenv("MEMRA_MLA_SELECT_SAMPLED");
    return !(v != NULL && strcmp(v, "0") == 0);
}

int mla_door_kpool_select_f32(const float *score, int32_t *idx, int32_t t_q, int32_t n_pools,
                              int32_t pool, int32_t select_k, int32_t width, int32_t first_pos,
                              int32_t always_tail, void *stream) {
    if (!mla_select_sampled_enabled())
        return mla_kpool_select_full_f32(score, idx, t_q, n_pools, pool, select_k, width, first_pos,
                                         always_tail, stream);
    return memra_mla_kpool_select_f32(score, idx, t_q, n_pools, pool, select_k, width, first_pos,
                                      always_tail, stream);
}
