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

/* Coefficients of one work-item (RNS_COEFS of them, N / RNS_COEFS apart): each output's constants
 * and addresses are computed once for all of them; the host sets it from XEHE_HYBRID_CONV_COEFS. */
#ifndef RNS_COEFS
#define RNS_COEFS 2
#endif

/* RNS_MIN_BLOCKS (CUDA, from XEHE_HYBRID_CONV_MIN_BLOCKS): CTAs of 256 work-items (the CUDA
 * launcher's grid-stride block) each SM must hold, which caps the registers per work-item. */
#if IS_CUDA && defined(RNS_MIN_BLOCKS)
#define RNS_KERNEL extern "C" __global__ void __launch_bounds__(256, RNS_MIN_BLOCKS)
#else
#define RNS_KERNEL KERNEL_FQ void
#endif

/*
 * A dot product of words below 2^60 in 30-bit limbs (y = y0 + y1 2^30, b = b0 + b1 2^30, each
 * packed as limb1 << 32 | limb0 by limb_pack, the matrix by the host): every partial product is
 * below 2^60, so sixteen of them sum in a u64 without a carry, and a term costs four 32x32->64
 * multiply-adds (CUDA: IMAD.WIDE.U32 with a 64-bit addend) where a 128-bit multiply-accumulate
 * in 64-bit words costs about twenty instructions (ncu SASS of the earlier kernel, BENCHMARKS.md
 * session 11). At most LIMB_TERMS terms are summed before limb_fold adds them to a u128_t.
 */
#define LIMB_MASK 0x3fffffffUL
#define LIMB_TERMS 8
typedef struct { u64 s00, s01, s11; } limb_acc_t;

DECLSPEC u64 limb_pack(u64 y)
{
    return ((y >> 30) << 32) | (y & LIMB_MASK);
}

/* c + a * b for 32-bit a, b (one IMAD.WIDE.U32 on CUDA; the compiler's own lowering of the C
 * expression adds moves and a zero add per product). */
DECLSPEC u64 mad_wide32(u32 a, u32 b, u64 c)
{
#if IS_CUDA && !XEHE_NO_ASM
    u64 r;
    asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(r) : "r"(a), "r"(b), "l"(c));
    return r;
#else
    return c + (u64)a * b;
#endif
}

DECLSPEC limb_acc_t limb_mad(limb_acc_t a, u64 y, u64 b)
{
    u32 y0 = (u32)y, y1 = (u32)(y >> 32), b0 = (u32)b, b1 = (u32)(b >> 32);
    a.s00 = mad_wide32(y0, b0, a.s00);
    a.s01 = mad_wide32(y0, b1, a.s01);
    a.s01 = mad_wide32(y1, b0, a.s01);
    a.s11 = mad_wide32(y1, b1, a.s11);
    return a;
}

/* acc + s00 + s01 2^30 + s11 2^60 (the limb sums of at most LIMB_TERMS terms). */
DECLSPEC u128_t limb_fold(limb_acc_t a, u128_t acc)
{
    u64 lo = acc.lo + a.s00;
    u64 hi = acc.hi + (lo < a.s00 ? 1 : 0);
    u64 t = a.s01 << 30;
    lo += t;
    hi += (lo < t ? 1 : 0) + (a.s01 >> 34);
    t = a.s11 << 60;
    lo += t;
    hi += (lo < t ? 1 : 0) + (a.s11 >> 4);
    u128_t r;
    r.lo = lo;
    r.hi = hi;
    return r;
}

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
 * the sum in 30-bit limbs (limb_mad; matrix entries packed by the host) and one Barrett reduction
 * per output (paper §V-A1); out_add[o] <= m_o (ModDown's m_o - [floor(P/2)]_{m_o}, 0 for ModUp).
 * With centered = 1 (balanced ModUp digits, src/ckks/hybrid.rs Digits::Balanced) each y_i is read
 * centred in (-q_i/2, q_i/2]: v -= c * digit_q[j*out_rows + o] mod m_o, c = #{i : y_i > q_i/2},
 * digit_q = [Q_j]_{m_o}. Every modulus is below 2^60 (SEAL's limit).
 *
 * skip = 1 (ModUp): the output base starts with the input rows, and a digit's own limbs
 * (o in [j*d, j*d + cnt_j)) are not computed (the caller holds them exactly, in NTT form).
 * Outputs are stored limb-major for the grouped NTT: limb o < split goes to row
 * (p*split + o)*(digits - skip) + jj of out_a (jj = j, less one past the skipped own digit:
 * j - 1 when o lies in an earlier digit), limb o >= split to row
 * (p*(out_rows - split) + o - split)*digits + j of out_b. ModDown: skip = 0, digits = 1,
 * split = out_rows, so out_a is polys × out_rows rows.
 *
 * One work-item per (poly, digit, chunk of `chunk` outputs, RNS_COEFS coefficients N/RNS_COEFS
 * apart): the chunk's outputs reuse the digit's scaled words from registers; more chunks raise
 * the parallelism of small conversions (ModDown: polys × N work-items only) for one extra scale
 * per chunk.
 */
RNS_KERNEL rns_conv_u64(GLOBAL_AS u64 *out_a, GLOBAL_AS u64 *out_b, CONST_AS u64 *x, CONST_AS u64 *in_moduli,
                            CONST_AS u64 *in_add, CONST_AS u64 *w, CONST_AS u64 *wq, CONST_AS u64 *matrix,
                            CONST_AS u64 *out_moduli, CONST_AS u64 *out_r0, CONST_AS u64 *out_r1,
                            CONST_AS u64 *out_add, CONST_AS u64 *digit_q, u32 centered, u32 d, u32 in_rows,
                            u32 digits, u32 out_rows, u32 split, u32 skip, u32 chunk, u32 chunks, u32 polys,
                            u32 log_n)
{
    u32 n = 1u << log_n;
    u32 log_part = log_n - (RNS_COEFS == 4 ? 2 : RNS_COEFS == 2 ? 1 : 0);
    u32 part = 1u << log_part;
    u64 total = ((u64)polys * digits * chunks) << log_part;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u32 xi = (u32)g & (part - 1);
        u32 rest = (u32)(g >> log_part);
        u32 c = rest % chunks, pj = rest / chunks;
        u32 j = pj % digits, p = pj / digits;
        u32 first = j * d;
        u32 cnt = in_rows - first < d ? in_rows - first : d;
        u32 others = skip ? out_rows - cnt : out_rows;
        u32 u0 = c * chunk;
        u32 u1 = u0 + chunk < others ? u0 + chunk : others;
        if (u0 >= u1) continue;
        CONST_AS u64 *src = x + (((u64)p * in_rows + first) << log_n) + xi;
        /* Scaled words in limb form; balanced digits count the words read as negative. */
        u64 yv[RNS_COEFS][RNS_REG_DIGIT];
        u64 neg[RNS_COEFS];
#pragma unroll
        for (u32 k = 0; k < RNS_COEFS; k++) {
            neg[k] = 0;
#pragma unroll
            for (u32 i = 0; i < RNS_REG_DIGIT; i++) {
                u64 y = i < cnt ? rns_scaled(src + k * part, i, log_n, first + i, in_moduli, in_add, w, wq) : 0;
                if (centered && i < cnt) neg[k] += y > (in_moduli[first + i] >> 1);
                yv[k][i] = limb_pack(y);
            }
            if (centered)
                for (u32 i = RNS_REG_DIGIT; i < cnt; i++)
                    neg[k] += rns_scaled(src + k * part, i, log_n, first + i, in_moduli, in_add, w, wq) >
                              (in_moduli[first + i] >> 1);
        }
        for (u32 u = u0; u < u1; u++) {
            u32 o = skip && u >= first ? u + cnt : u;
            CONST_AS u64 *mrow = matrix + ((u64)j * out_rows + o) * d;
            u64 m = out_moduli[o], r0 = out_r0[o], r1 = out_r1[o], oadd = out_add[o];
            u64 dq = centered ? digit_q[(u64)j * out_rows + o] : 0;
            u64 row = o < split ? ((u64)p * split + o) * (digits - skip) + (skip && o < first ? j - 1 : j)
                                : ((u64)p * (out_rows - split) + o - split) * digits + j;
            GLOBAL_AS u64 *dst = (o < split ? out_a : out_b) + (row << log_n) + xi;
            limb_acc_t la[RNS_COEFS];
            u128_t acc[RNS_COEFS];
#pragma unroll
            for (u32 k = 0; k < RNS_COEFS; k++) {
                la[k].s00 = la[k].s01 = la[k].s11 = 0;
                acc[k].lo = acc[k].hi = 0;
            }
            /* A short last digit's missing words are 0 in yv, and its matrix rows are d wide. */
#pragma unroll
            for (u32 i = 0; i < RNS_REG_DIGIT; i++) {
                u64 b = mrow[i];
#pragma unroll
                for (u32 k = 0; k < RNS_COEFS; k++) {
                    la[k] = limb_mad(la[k], yv[k][i], b);
                    if (i % LIMB_TERMS == LIMB_TERMS - 1) {
                        acc[k] = limb_fold(la[k], acc[k]);
                        la[k].s00 = la[k].s01 = la[k].s11 = 0;
                    }
                }
            }
            for (u32 i = RNS_REG_DIGIT; i < cnt; i++) {
                u64 b = mrow[i];
                for (u32 k = 0; k < RNS_COEFS; k++) {
                    u64 y = limb_pack(rns_scaled(src + k * part, i, log_n, first + i, in_moduli, in_add, w, wq));
                    la[k] = limb_mad(la[k], y, b);
                    if (i % LIMB_TERMS == LIMB_TERMS - 1) {
                        acc[k] = limb_fold(la[k], acc[k]);
                        la[k].s00 = la[k].s01 = la[k].s11 = 0;
                    }
                }
            }
#pragma unroll
            for (u32 k = 0; k < RNS_COEFS; k++) {
                u64 v = add_mod(barrett_reduce_128(limb_fold(la[k], acc[k]), m, r0, r1), oadd, m);
                if (neg[k]) v = sub_mod(v, mul_mod(neg[k], dq, m, r0, r1), m);
                dst[k * part] = v;
            }
        }
    }
}
