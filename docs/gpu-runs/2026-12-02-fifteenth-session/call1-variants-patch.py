import sys
p='/work/main/kernels/mla_attn.cu'; s=open(p).read()
which=sys.argv[1:]
def rep(old,new):
    global s
    assert s.count(old)==1, old[:80]
    s=s.replace(old,new)
if 'alpha' in which:
    rep('''            const float a0 = alpha_s[mt * 16 + fg], a1 = alpha_s[mt * 16 + fg + 8];
#pragma unroll
            for (int nt = 0; nt < 8; nt++) {
                if (nt >= nnt) break;
                o[mt][nt][0] = __fmul_rn(o[mt][nt][0], a0);''','''            const float a0 = alpha_s[mt * 16 + fg], a1 = alpha_s[mt * 16 + fg + 8];
            if (__all_sync(0xffffffffu, a0 == 1.0f && a1 == 1.0f)) continue;
#pragma unroll
            for (int nt = 0; nt < 8; nt++) {
                if (nt >= nnt) break;
                o[mt][nt][0] = __fmul_rn(o[mt][nt][0], a0);''')
if 'copy' in which or 'copyb' in which:
    rep('''    auto issue = [&](int32_t k) {
        float *dst = ks + (size_t)(k & 1) * TCA_JT * ldk + (size_t)cr * ldk + 4 * cq;
        const int32_t row = rows_s[(k % 3) * TCA_JT + cr];
        const bool ok = row >= 0;
        const float *src = cache + (int64_t)(ok ? row : 0) * width + 4 * cq;
        if (KSW) {
#pragma unroll
            for (int32_t u = 0; u < 2 * KSW; u++) /* wp4 / 8 = 2 KSW float4 a thread */
                mla_cp_async16(dst + 32 * u, src + 32 * u, ok);
        } else {
            for (int32_t c4 = cq; c4 < wp4; c4 += 8, dst += 32, src += 32)
                mla_cp_async16(dst, src, ok);
        }
        mla_cp_async_commit();
    };''','''    auto issue = [&](int32_t k, int part) {
        float *dst = ks + (size_t)(k & 1) * TCA_JT * ldk + (size_t)cr * ldk + 4 * cq;
        const int32_t row = rows_s[(k % 3) * TCA_JT + cr];
        const bool ok = row >= 0;
        const float *src = cache + (int64_t)(ok ? row : 0) * width + 4 * cq;
        if (KSW) {
#pragma unroll
            for (int32_t u = 0; u < 2 * KSW; u++) /* wp4 / 8 = 2 KSW float4 a thread */
                if (part < 0 || (u < KSW) == (part == 0))
                    mla_cp_async16(dst + 32 * u, src + 32 * u, ok);
        } else if (part <= 0) {
            for (int32_t c4 = cq; c4 < wp4; c4 += 8, dst += 32, src += 32)
                mla_cp_async16(dst, src, ok);
        }
        if (part != 0) mla_cp_async_commit();
    };''')
    rep('''    issue(0);
    /* the A fragments''','''    issue(0, -1);
    /* the A fragments''')
    if 'copyb' in which:
        rep('''        if (k + 1 < n_k) issue(k + 1);
        stage(k + 2);''','''        stage(k + 2);''')
        rep('''        __syncthreads(); /* (b) partials */

        /* 2. logits of head sh''','''        __syncthreads(); /* (b) partials */
        if (k + 1 < n_k) issue(k + 1, -1);

        /* 2. logits of head sh''')
    else:
        rep('''        if (k + 1 < n_k) issue(k + 1);
        stage(k + 2);''','''        if (k + 1 < n_k) issue(k + 1, 0);
        stage(k + 2);''')
        rep('''        __syncthreads(); /* (b) partials */

        /* 2. logits of head sh''','''        __syncthreads(); /* (b) partials */
        if (k + 1 < n_k) issue(k + 1, 1);

        /* 2. logits of head sh''')
open(p,'w').write(s)
