/*
 * rns.cl — RNS base conversion for hybrid key switching (src/ckks/hybrid.rs: ModUp and ModDown;
 * SEAL util::BaseConverter, Bajard–Eynard–Hasan–Zucca FastBConv; generalized key switching of
 * seeds/003). The host glue is src/device/gpu/hybrid.rs; the arithmetic is the CPU reference's
 * (src/math/base_conv.rs), so results are bit-identical.
 */
#include "modarith.h"

/* Scaled words of a digit held in registers by rns_conv_u64 (the rest of a wider digit is read
 * and scaled again); the host sets it to the digit size, at most 16. */
#ifndef RNS_REG_DIGIT
#define RNS_REG_DIGIT 16
#endif

/* Outputs of one work-item unrolled side by side (independent multiply chains: more ILP, more
 * registers); the host sets it from XEHE_HYBRID_CONV_UNROLL. */
#ifndef RNS_OUT_UNROLL
#define RNS_OUT_UNROLL 1
#endif

/*
 * Scale step of fast base conversion for input row r (within its poly) at word i of the digit
 * starting at src: [(src[i] + add[r]) * w[r]]_{q_r} (w = qhat^{-1} within the row's digit,
 * Shoup quotient wq; add: ModDown's floor(P/2), 0 for ModUp).
 */
DECLSPEC u64 rns_scaled(CONST_AS u64 *src, u32 i, u32 log_n, u32 r, CONST_AS u64 *moduli, CONST_AS u64 *add,
                        CONST_AS u64 *w, CONST_AS u64 *wq)
{
    u64 q = moduli[r];
    return mul_shoup(add_mod(src[(u64)i << log_n], add[r], q), w[r], wq[r], q);
}

/*
 * Fast base conversion, scale and convert in one launch (ModUp and ModDown). Input: polys × in_rows
 * canonical rows (coefficient form) in digits of d consecutive rows (the last one may be short:
 * cnt_j = min(d, in_rows - j*d)). For poly p, digit j < digits and output limb o < out_rows:
 *   v = ([sum_{i < cnt_j} y_i * matrix[(j*out_rows + o)*d + i]]_{m_o} + out_add[o]) mod m_o,
 *   y_i = [(x[p][j*d + i] + in_add[j*d + i]) * w[j*d + i]]_{q_{j*d+i}} (scaled in registers),
 * with one 128-bit multiply-add chain and one Barrett reduction per output (paper §V-A1);
 * out_add[o] <= m_o (ModDown's m_o - [floor(P/2)]_{m_o}, 0 for ModUp). With centered = 1
 * (balanced ModUp digits, src/ckks/hybrid.rs Digits::Balanced) each y_i is read centred in
 * (-q_i/2, q_i/2]: v -= c * digit_q[j*out_rows + o] mod m_o, c = #{i : y_i > q_i/2},
 * digit_q = [Q_j]_{m_o}.
 *
 * skip = 1 (ModUp): the output base starts with the input rows, and a digit's own limbs
 * (o in [j*d, j*d + cnt_j)) are not computed (the caller holds them exactly, in NTT form).
 * Outputs are stored limb-major for the grouped NTT: limb o < split goes to row
 * (p*split + o)*(digits - skip) + jj of out_a (jj = j, less one past the skipped own digit:
 * j - 1 when o lies in an earlier digit), limb o >= split to row
 * (p*(out_rows - split) + o - split)*digits + j of out_b. ModDown: skip = 0, digits = 1,
 * split = out_rows, so out_a is polys × out_rows rows.
 *
 * One work-item per (poly, digit, chunk of `chunk` outputs, coefficient): the chunk's outputs
 * reuse the digit's scaled words from registers; more chunks raise the parallelism of small
 * conversions (ModDown: polys × N work-items only) for one extra scale per chunk. Outputs are
 * computed RNS_OUT_UNROLL at a time, all loads and multiply chains of a group before its stores.
 */
KERNEL_FQ void rns_conv_u64(GLOBAL_AS u64 *out_a, GLOBAL_AS u64 *out_b, CONST_AS u64 *x, CONST_AS u64 *in_moduli,
                            CONST_AS u64 *in_add, CONST_AS u64 *w, CONST_AS u64 *wq, CONST_AS u64 *matrix,
                            CONST_AS u64 *out_moduli, CONST_AS u64 *out_r0, CONST_AS u64 *out_r1,
                            CONST_AS u64 *out_add, CONST_AS u64 *digit_q, u32 centered, u32 d, u32 in_rows,
                            u32 digits, u32 out_rows, u32 split, u32 skip, u32 chunk, u32 chunks, u32 polys,
                            u32 log_n)
{
    u32 n = 1u << log_n;
    u64 total = ((u64)polys * digits * chunks) << log_n;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u32 xi = (u32)g & (n - 1);
        u32 rest = (u32)(g >> log_n);
        u32 c = rest % chunks, pj = rest / chunks;
        u32 j = pj % digits, p = pj / digits;
        u32 first = j * d;
        u32 cnt = in_rows - first < d ? in_rows - first : d;
        u32 others = skip ? out_rows - cnt : out_rows;
        u32 u0 = c * chunk;
        u32 u1 = u0 + chunk < others ? u0 + chunk : others;
        if (u0 >= u1) continue;
        CONST_AS u64 *src = x + (((u64)p * in_rows + first) << log_n) + xi;
        u64 yv[RNS_REG_DIGIT];
#pragma unroll
        for (u32 i = 0; i < RNS_REG_DIGIT; i++)
            yv[i] = i < cnt ? rns_scaled(src, i, log_n, first + i, in_moduli, in_add, w, wq) : 0;
        /* Balanced digits: how many scaled words are read as negative. */
        u64 neg = 0;
        if (centered) {
#pragma unroll
            for (u32 i = 0; i < RNS_REG_DIGIT; i++)
                if (i < cnt) neg += yv[i] > (in_moduli[first + i] >> 1);
            for (u32 i = RNS_REG_DIGIT; i < cnt; i++)
                neg += rns_scaled(src, i, log_n, first + i, in_moduli, in_add, w, wq) > (in_moduli[first + i] >> 1);
        }
        for (u32 ub = u0; ub < u1; ub += RNS_OUT_UNROLL) {
            /* Every load and multiply chain of the group before its stores (the stores could
             * alias the constants for all the compiler knows). */
            u64 val[RNS_OUT_UNROLL];
            u32 outs[RNS_OUT_UNROLL];
#pragma unroll
            for (u32 k = 0; k < RNS_OUT_UNROLL; k++) {
                u32 u = ub + k < u1 ? ub + k : u1 - 1;
                u32 o = skip && u >= first ? u + cnt : u;
                outs[k] = o;
                CONST_AS u64 *mrow = matrix + ((u64)j * out_rows + o) * d;
                u128_t acc;
                acc.lo = acc.hi = 0;
#pragma unroll
                for (u32 i = 0; i < RNS_REG_DIGIT; i++)
                    if (i < cnt) acc = mad64_wide(yv[i], mrow[i], acc);
                for (u32 i = RNS_REG_DIGIT; i < cnt; i++)
                    acc = mad64_wide(rns_scaled(src, i, log_n, first + i, in_moduli, in_add, w, wq), mrow[i], acc);
                u64 m = out_moduli[o];
                val[k] = add_mod(barrett_reduce_128(acc, m, out_r0[o], out_r1[o]), out_add[o], m);
                if (neg)
                    val[k] = sub_mod(val[k], mul_mod(neg, digit_q[(u64)j * out_rows + o], m, out_r0[o], out_r1[o]), m);
            }
#pragma unroll
            for (u32 k = 0; k < RNS_OUT_UNROLL; k++) {
                u32 o = outs[k];
                u64 row = o < split ? ((u64)p * split + o) * (digits - skip) + (skip && o < first ? j - 1 : j)
                                    : ((u64)p * (out_rows - split) + o - split) * digits + j;
                GLOBAL_AS u64 *dst = o < split ? out_a : out_b;
                if (ub + k < u1) dst[(row << log_n) + xi] = val[k];
            }
        }
    }
}
