p='/work/main/kernels/mla_attn.cu'; s=open(p).read()
def rep(old,new):
    global s
    assert s.count(old)==1, old[:90]; s=s.replace(old,new)
# 1. rescale + P.V
a=s.index('        /* 3. O = O * alpha + P . V over this warp\'s columns */')
b=s.index("        /* no barrier: the next tile's (a) orders these reads before the next writes */\n    }\n\n    /* The rare path")
old_pv=s[a:b]
new_pv='''        if constexpr (NNT == 8) {
            /* O^T = V^T P^T: A = V^T (column m-tile cm: logical row g is column 16 cm + 2 g, row
             * g + 8 column 16 cm + 2 g + 1, so two 8-byte loads make the fragment), B = P^T by
             * ldmatrix.x4 (two head n-tiles). o[cm >> 1][(cm & 1) * 4 + hn] holds O^T tile (cm,
             * hn): c0 = O[head 8 hn + 2 ft][col 16 cm + 2 fg], c1 head + 1, c2 / c3 col + 1. */
#pragma unroll
            for (int hn = 0; hn < 4; hn++) {
                const float a0 = alpha_s[8 * hn + 2 * ft], a1 = alpha_s[8 * hn + 2 * ft + 1];
#pragma unroll
                for (int cm = 0; cm < 4; cm++) {
                    float *c = o[cm >> 1][(cm & 1) * 4 + hn];
                    c[0] = __fmul_rn(c[0], a0);
                    c[1] = __fmul_rn(c[1], a1);
                    c[2] = __fmul_rn(c[2], a0);
                    c[3] = __fmul_rn(c[3], a1);
                }
            }
            const uint32_t pb = (uint32_t)__cvta_generic_to_shared(
                ps + ((lane & 7) + ((lane >> 4) & 1) * 8) * TCA_PL + ((lane >> 3) & 1) * 4);
            const float *va = buf + ft * ldk + vc0 + 2 * fg;
#pragma unroll
            for (int kk = 0; kk < TCA_JT / 8; kk++) {
                uint32_t bq[2][4];
#pragma unroll
                for (int hp = 0; hp < 2; hp++)
                    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                                 : "=r"(bq[hp][0]), "=r"(bq[hp][1]), "=r"(bq[hp][2]), "=r"(bq[hp][3])
                                 : "r"(pb + (uint32_t)(hp * 16 * TCA_PL + kk * 8) * 4u));
#pragma unroll
                for (int cm = 0; cm < 4; cm++) {
                    const float *vk = va + kk * 8 * ldk + cm * 16;
                    const float2 lo = *reinterpret_cast<const float2 *>(vk);
                    const float2 hi = *reinterpret_cast<const float2 *>(vk + 4 * ldk);
                    const uint32_t af[4] = {__float_as_uint(lo.x), __float_as_uint(lo.y),
                                            __float_as_uint(hi.x), __float_as_uint(hi.y)};
#pragma unroll
                    for (int hn = 0; hn < 4; hn++) {
                        const uint32_t bf[2] = {bq[hn >> 1][(hn & 1) * 2],
                                                bq[hn >> 1][(hn & 1) * 2 + 1]};
                        at_mma(o[cm >> 1][(cm & 1) * 4 + hn], af, bf);
                    }
                }
            }
        } else {
'''+old_pv+'''        }
'''
s=s[:a]+new_pv+s[b:]
# 2. epilogue
a=s.index('    if (n_chunks > 1) {\n        /* The partial O, one 16-byte store per (m-tile, n-tile) a lane')
b=s.index('    if (n_chunks > 1 && sq == 0 && h0 + sh < n_head) {')
old_ep=s[a:b]
new_ep='''    if constexpr (NNT == 8) {
        /* lanes fg and fg ^ 1 swap a pair: the even lane stores head 8 hn + 2 ft's columns
         * 16 cm + 2 fg .. + 3, the odd lane head 8 hn + 2 ft + 1's columns 16 cm + 2 fg - 2 .. + 1 */
        const bool odd = fg & 1;
#pragma unroll
        for (int hn = 0; hn < 4; hn++) {
            const int hh = 8 * hn + 2 * ft + (odd ? 1 : 0);
            const int32_t h = h0 + hh;
            const int64_t qh = i * n_head + (h < n_head ? h : 0);
            const float m = fin_m[hh], l = fin_l[hh];
            const bool nan_out = fin_p[hh] != 0.0f || fabsf(m) == INFINITY;
#pragma unroll
            for (int cm = 0; cm < 4; cm++) {
                const float *v = o[cm >> 1][(cm & 1) * 4 + hn];
                /* even: keeps (c0, c2) of head 2 ft, gets the odd lane's (c0, c2); odd: keeps
                 * (c1, c3) of head 2 ft + 1, gets the even lane's (c1, c3) */
                const float s0 = __shfl_xor_sync(0xffffffffu, odd ? v[0] : v[1], 4);
                const float s1 = __shfl_xor_sync(0xffffffffu, odd ? v[2] : v[3], 4);
                const float4 q = odd ? make_float4(s0, s1, v[1], v[3])
                                     : make_float4(v[0], v[2], s0, s1);
                const int32_t r = vc0 + 16 * cm + 2 * (fg & ~1);
                if (h >= n_head) continue;
                if (n_chunks > 1) {
                    *reinterpret_cast<float4 *>(ws_o + ((int64_t)chunk * n_qh + qh) * kv_rank + r) =
                        q;
                } else {
                    at_store_pair(o_lat, ws_o, 1, chunk, n_qh, qh, kv_rank, r, q.x, q.y, nonempty,
                                  nan_out, l);
                    at_store_pair(o_lat, ws_o, 1, chunk, n_qh, qh, kv_rank, r + 2, q.z, q.w,
                                  nonempty, nan_out, l);
                }
            }
        }
    } else '''+old_ep.lstrip()
s=s[:a]+new_ep+s[b:]
open(p,'w').write(s)
