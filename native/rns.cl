/*
 * rns.cl — RNS base conversion for hybrid key switching (src/ckks/hybrid.rs: ModUp and ModDown;
 * SEAL util::BaseConverter, Bajard–Eynard–Hasan–Zucca FastBConv; generalized key switching of
 * seeds/003). The host glue is src/device/gpu/hybrid.rs; the arithmetic is the CPU reference's
 * (src/math/base_conv.rs), so results are bit-identical.
 */
#include "modarith.h"

/*
 * Fast base conversion of digits, one launch for every digit and output limb.
 * Input: polys × in_rows rows (coefficient form, canonical), grouped in digits of d consecutive
 * rows (the last one may be short: cnt_j = min(d, in_rows - j*d)). For poly p, digit j < digits,
 * output limb o < out_rows:
 *   y_r = [(in[p][r][x] + in_add[r]) * in_w[r]]_{q_r}          (scale by qhat_r^{-1}, Shoup)
 *   out[(p*digits + j)*out_rows + o][x]
 *       = ([sum_{r in digit j} y_r * matrix[(j*out_rows + o)*d + r - j*d]]_{m_o} + out_add[o]) mod m_o
 * with one 128-bit multiply-add chain and one Barrett reduction per output word (mad_mod,
 * paper §V-A1). out_add[o] <= m_o. Constants indexed by r are per input row of one poly.
 */
KERNEL_FQ void rns_base_conv_u64(GLOBAL_AS u64 *out, CONST_AS u64 *in, CONST_AS u64 *in_moduli,
                                 CONST_AS u64 *in_add, CONST_AS u64 *in_w, CONST_AS u64 *in_wq,
                                 CONST_AS u64 *matrix, CONST_AS u64 *out_moduli, CONST_AS u64 *out_r0,
                                 CONST_AS u64 *out_r1, CONST_AS u64 *out_add, u32 d, u32 in_rows,
                                 u32 digits, u32 out_rows, u32 polys, u32 log_n)
{
    u64 n = (u64)1 << log_n;
    u64 total = (u64)polys * digits * out_rows * n;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u64 row = g >> log_n, x = g & (n - 1);
        u32 o = (u32)(row % out_rows);
        u64 pj = row / out_rows;
        u32 j = (u32)(pj % digits), p = (u32)(pj / digits);
        u32 first = j * d;
        u32 cnt = in_rows - first < d ? in_rows - first : d;
        u64 src = (((u64)p * in_rows + first) << log_n) + x;
        u64 mrow = ((u64)j * out_rows + o) * d;
        u128_t acc;
        acc.lo = acc.hi = 0;
        for (u32 i = 0; i < cnt; i++) {
            u32 r = first + i;
            u64 q = in_moduli[r];
            u64 y = mul_shoup(add_mod(in[src + ((u64)i << log_n)], in_add[r], q), in_w[r], in_wq[r], q);
            acc = mad64_wide(y, matrix[mrow + i], acc);
        }
        u64 m = out_moduli[o];
        out[g] = add_mod(barrett_reduce_128(acc, m, out_r0[o], out_r1[o]), out_add[o], m);
    }
}
