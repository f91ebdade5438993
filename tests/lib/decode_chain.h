/* decode_chain.h: decode-step chains, described once for the oracle chain (CPU, oracle/ only)
 * and the GPU chain (tests/test_decode_chain_gpu.c: the memra_mla_* launchers on device
 * buffers, each stage fed with the previous GPU stage's output).
 *
 * A chain starts from a cache prefix of g.t_kv rows (latent cache and indexer ring, the ring
 * filled by the append schedule mla_kpool_ring_chunk with an incremental pool-key build after
 * each chunk) and runs `steps` decode steps of g.t_q tokens each. Step s appends its rows at
 * slot = t_kv + s * t_q, so its queries (rows slot .. slot + t_q - 1) and every later step attend
 * them. Per step, in this order (each tensor computed from the tensors before it):
 *
 *   split_latent       kv[t_q][kv_rank + d_rope] -> c_kv, k_pe_raw
 *   rope               q_pe_raw -> q_pe (positions slot + i); k_pe_raw -> k_pe (in place)
 *   append_latent      cache rows slot.. <- [c_kv | k_pe]       (tensor: the whole cache, L rows)
 *   index_append_ring  ring rows (slot + i) mod state_rows <- [idx_k | idx_gate]
 *   pool_keys          pools [L_prev / pool, L / pool) built from the ring (the table: every pool)
 *   score              idx_q, hw, pool_keys -> score[t_q][L / pool]   (first_pos = slot)
 *   select             score -> idx[t_q][width]
 *   absorb_q           q_nope, wk_b -> q_lat
 *   attn_absorbed      q_lat, q_pe, cache -> o_lat                    (t_kv = L)
 *   attn_gathered      q_lat, q_pe, cache, idx -> o_lat_gathered       (n_slots = width)
 *   decompress_v       o_lat -> out; o_lat_gathered -> out_gathered
 *
 * (L = rows after the step's append, L_prev = rows before it.) Every tensor's tolerance class is
 * the one its stage descriptor states (stages_dense.c / stages_kpool.c: mla_stage outputs), read
 * through dc_tensor(); nothing here chooses a tolerance.
 *
 * Inputs are the Philox fill of tests/lib/mla_fill.h keyed by the chain's seed and the tensor's
 * name (dc_inputs_make). The head geometry is a tests/lib/geometry.h preset; only the cache is
 * short (a few hundred rows) and the indexer's select_k is scaled down with it so that the
 * selection really drops rows (at the model's top-2048 every row of a short cache is selected).
 *
 * dc_oracle_tensor computes one tensor of one step from the tensors of a run (dc_run): on the
 * oracle's own run it builds the oracle chain (dc_oracle_chain); on the GPU's run it is the
 * oracle of the GPU's inputs to that stage, the stage-local reference whose distance to the GPU
 * output the stage's class bounds (dc_bounds gives the per-element bounds of that class from the
 * same inputs).
 */
#ifndef MLA_TESTS_DECODE_CHAIN_H
#define MLA_TESTS_DECODE_CHAIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tests/lib/case.h"
#include "tests/lib/geometry.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DC_MAX_STEPS 8

/* One chain. g: head geometry and indexer (tests/lib/geometry.h presets); g.t_q = tokens per
 * step, g.t_kv = rows of the prefix, g.state_rows = the indexer ring (a multiple of the pool,
 * at most the prefix: every ring row is written before step 0). first_pos / n_pools of g are
 * unused (each step has its own). */
typedef struct {
    const char *name; /* also the Criterion test name */
    const char *model;
    const char *purpose;
    mla_geom g;
    int32_t steps;
    uint32_t seed;
} dc_chain;

size_t dc_chain_count(void);
const dc_chain *dc_chain_at(size_t i);
const dc_chain *dc_chain_find(const char *name); /* NULL when unknown */

/* The tensors of a step, in chain order (the order in which a step computes them). */
typedef enum {
    DC_C_KV = 0,
    DC_K_PE_RAW,
    DC_Q_PE,
    DC_K_PE,
    DC_CACHE,
    DC_IDX_STATE,
    DC_POOL_KEYS,
    DC_SCORE,
    DC_IDX,
    DC_Q_LAT,
    DC_O_LAT,
    DC_O_LAT_GATHERED,
    DC_OUT,
    DC_OUT_GATHERED,
    DC_N_TENSORS
} dc_tensor_id;

typedef struct {
    const char *tensor;    /* "o_lat" */
    const char *stage;     /* the descriptor's stage name: "attn_absorbed" */
    const mla_stage *desc; /* the stage descriptor (stages_dense.c / stages_kpool.c) */
    int output;            /* the descriptor output whose class this tensor has */
} dc_tensor_info;

const dc_tensor_info *dc_tensor(dc_tensor_id id);
mla_tol_class dc_class(dc_tensor_id id);
/* exact class only: 1 when the comparison ignores NaN payloads (the descriptor's nan_any) */
int dc_nan_any(dc_tensor_id id);
/* 0 for the rope tensors of a NoPE chain (d_rope == 0). */
int dc_present(const dc_chain *c, dc_tensor_id id);

/* Rows of the cache after step s's append; the slot of step s; pools complete after step s
 * (s = -1: the prefix). */
int32_t dc_rows_after(const dc_chain *c, int32_t s);
int32_t dc_slot(const dc_chain *c, int32_t s);
int32_t dc_pools_after(const dc_chain *c, int32_t s);
/* Shape and dtype of tensor id at step s; returns its byte size. */
size_t dc_shape(const dc_chain *c, dc_tensor_id id, int32_t s, int *ndim, int64_t shape[3],
                st_dtype *dt);

/* The chain's inputs (the fill; every array malloc'd). Step s uses rows s * t_q.. of kv, q_nope,
 * q_pe_raw, idx_q, idx_hw and positions; idx_k / idx_gate have a row per cache row. */
typedef struct {
    float *cache_prefix; /* [t_kv][kv_rank + d_rope] */
    float *kv;           /* [steps * t_q][kv_rank + d_rope] */
    float *q_nope;       /* [steps * t_q][n_head][d_nope] */
    float *q_pe_raw;     /* [steps * t_q][n_head][d_rope] (NULL when d_rope == 0) */
    float *wk_b;         /* [n_head][d_nope][kv_rank] */
    float *wv_b;         /* [n_head][d_v][kv_rank] */
    float *idx_k;        /* [t_kv + steps * t_q][idx_dim] */
    float *idx_gate;     /* [t_kv + steps * t_q][idx_dim] */
    float *idx_ape;      /* [pool][idx_dim] */
    float *idx_q;        /* [steps * t_q][idx_heads][idx_dim] */
    float *idx_hw;       /* [steps * t_q][idx_heads] */
    int32_t *positions;  /* [steps * t_q]: the cache row of each step token */
    size_t n_cache_prefix, n_kv, n_q_nope, n_q_pe_raw, n_wk_b, n_wv_b, n_idx_rows, n_idx_ape,
        n_idx_q, n_idx_hw, n_tokens; /* element counts (idx_k and idx_gate: n_idx_rows * idx_dim) */
} dc_inputs;

/* 0, or -1 (out of memory / a chain that breaks its own rules), *in freed. */
int dc_inputs_make(const dc_chain *c, dc_inputs *in);
void dc_inputs_free(dc_inputs *in);

/* A chain's record: every tensor of every step (malloc'd, NULL when absent) and the prefix's
 * indexer state (the ring [state_rows][2 idx_dim] and the pool keys [t_kv / pool][idx_dim]). */
typedef struct {
    void *t[DC_MAX_STEPS][DC_N_TENSORS];
    float *prefix_ring, *prefix_keys;
} dc_run;

void dc_run_free(dc_run *r);

/* The prefix's indexer state, from the inputs only: ring [state_rows][2 d], keys [t_kv/pool][d].
 */
void dc_oracle_prefix(const dc_chain *c, const dc_inputs *in, float *ring, float *keys);

/* Tensor id of step s computed by the oracle from the inputs and the tensors of run r that come
 * before it (this step's earlier tensors, the previous step's cache / ring / keys, or r's prefix
 * for s == 0). out: dc_shape's bytes. 0, or -1 when r lacks a tensor it needs. */
int dc_oracle_tensor(const dc_chain *c, const dc_inputs *in, const dc_run *r, int32_t s,
                     dc_tensor_id id, void *out);

/* The per-element bounds of tensor id's class (docs/tolerances.md) for the inputs dc_oracle_tensor
 * reads from r: 1 with atol[dc_shape elements] filled, or 0 for the exact class (atol unused).
 * pool_keys: pools built before step s get 0 (they must be untouched, bytes). */
int dc_bounds(const dc_chain *c, const dc_inputs *in, const dc_run *r, int32_t s, dc_tensor_id id,
              double *atol);

/* The whole oracle chain into *r (dc_run_free it, also on failure). 0 or -1. */
int dc_oracle_chain(const dc_chain *c, const dc_inputs *in, dc_run *r);

/* ---- the stage-local check (the GPU suite; the CPU suite's negative control) ---------------- */
/* Where a chain first broke. step -1: the prefix (ring and pool keys before step 0). */
typedef struct {
    int n_failed;       /* tensors over their class */
    int32_t first_step; /* the first (step, tensor) in chain order over its class */
    dc_tensor_id first_id;
    int diverged;     /* 1 when some tensor's bytes differ from the oracle chain's */
    int32_t div_step; /* the first such (step, tensor) */
    dc_tensor_id div_id;
} dc_verdict;

/* Judges run `got` (the GPU chain) tensor by tensor, in chain order. Each tensor is compared
 * (tb_compare: its report, a reproducer) with the oracle of got's OWN inputs to that stage
 * (dc_oracle_tensor on got), within the class its stage descriptor states (dc_bounds): the
 * class bounds one kernel on given inputs, so they hold at every step even after an earlier
 * non-exact stage (rope, pool_keys, attention) has moved the GPU chain off the oracle chain's
 * bytes. The prefix state is compared with the oracle chain's (its inputs are the fill only).
 * Then, when some tensor failed, one more failure names the first:
 *   "chain <name> step <s>: first stage over its class: <stage> (<tensor>)".
 * oracle: the oracle chain, for the drift report written to `drift` (NULL: none): the first
 * tensor whose bytes leave the oracle chain's, and per step the distance of o_lat,
 * o_lat_gathered, out, out_gathered, score and idx to the oracle chain's (a report, not a
 * verdict: the inputs differ, so no class bounds it). */
dc_verdict dc_check_chain(tb *t, const dc_chain *c, const dc_inputs *in, const dc_run *got,
                          const dc_run *oracle, FILE *drift);

#ifdef __cplusplus
}
#endif
#endif /* MLA_TESTS_DECODE_CHAIN_H */
