/*
 * rns.cl — RNS base conversion for hybrid key switching (src/ckks/hybrid.rs: ModUp and ModDown;
 * SEAL util::BaseConverter, Bajard–Eynard–Hasan–Zucca FastBConv; generalized key switching of
 * seeds/003). The host glue is src/device/gpu/hybrid.rs; the arithmetic is the CPU reference's
 * (src/math/base_conv.rs), so results are bit-identical.
 */
#include "modarith.h"

/*
 * Scale step of fast base conversion, in place over rows × N words (canonical): for row r of
 * a poly of k rows, y = [(x + add[r % k]) * w[r % k]]_{q_{r % k}} (w = qhat^{-1} within the
 * row's digit, Shoup quotient wq; add: ModDown's floor(P/2), 0 for ModUp).
 */
KERNEL_FQ void rns_scale_u64(GLOBAL_AS u64 *data, CONST_AS u64 *moduli, CONST_AS u64 *add, CONST_AS u64 *w,
                             CONST_AS u64 *wq, u32 k, u32 log_n, u64 total)
{
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u32 r = (u32)((g >> log_n) % k);
        u64 q = moduli[r];
        data[g] = mul_shoup(add_mod(data[g], add[r], q), w[r], wq[r], q);
    }
}

/*
 * Convert step, one launch for every digit and output limb. Input: polys × in_rows scaled rows
 * (rns_scale_u64), grouped in digits of d consecutive rows (the last one may be short:
 * cnt_j = min(d, in_rows - j*d)). For poly p, digit j < digits, output limb o < out_rows:
 *   out[(p*digits + j)*out_rows + o][x]
 *       = ([sum_{i < cnt_j} y[p][j*d + i][x] * matrix[(j*out_rows + o)*d + i]]_{m_o} + out_add[o]) mod m_o
 * with one 128-bit multiply-add chain and one Barrett reduction per output word (mad_mod,
 * paper §V-A1); out_add[o] <= m_o (ModDown's m_o - [floor(P/2)]_{m_o}, 0 for ModUp).
 */
/* Digits whose words are held in registers by rns_base_conv_u64 (larger digits read again). */
#define RNS_REG_DIGIT 16

KERNEL_FQ void rns_base_conv_u64(GLOBAL_AS u64 *out, CONST_AS u64 *y, CONST_AS u64 *matrix,
                                 CONST_AS u64 *out_moduli, CONST_AS u64 *out_r0, CONST_AS u64 *out_r1,
                                 CONST_AS u64 *out_add, u32 d, u32 in_rows, u32 digits, u32 out_rows,
                                 u32 polys, u32 log_n)
{
    /* One work-item per (poly, digit, coefficient): its digit's words are read once (into
     * registers when d <= RNS_REG_DIGIT) and every output limb is written from them, coalesced
     * across the work-items of a coefficient range. */
    u32 n = 1u << log_n;
    u64 total = ((u64)polys * digits) << log_n;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u32 x = (u32)g & (n - 1);
        u32 pj = (u32)(g >> log_n);
        u32 j = pj % digits, p = pj / digits;
        u32 first = j * d;
        u32 cnt = in_rows - first < d ? in_rows - first : d;
        CONST_AS u64 *src = y + (((u64)p * in_rows + first) << log_n) + x;
        u64 yv[RNS_REG_DIGIT];
#pragma unroll
        for (u32 i = 0; i < RNS_REG_DIGIT; i++) yv[i] = i < cnt ? src[(u64)i << log_n] : 0;
        GLOBAL_AS u64 *dst = out + (((u64)pj * out_rows) << log_n) + x;
        for (u32 o = 0; o < out_rows; o++) {
            CONST_AS u64 *mrow = matrix + ((u64)j * out_rows + o) * d;
            u128_t acc;
            acc.lo = acc.hi = 0;
#pragma unroll
            for (u32 i = 0; i < RNS_REG_DIGIT; i++)
                if (i < cnt) acc = mad64_wide(yv[i], mrow[i], acc);
            for (u32 i = RNS_REG_DIGIT; i < cnt; i++) acc = mad64_wide(src[(u64)i << log_n], mrow[i], acc);
            u64 m = out_moduli[o];
            dst[(u64)o << log_n] = add_mod(barrett_reduce_128(acc, m, out_r0[o], out_r1[o]), out_add[o], m);
        }
    }
}
