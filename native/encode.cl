/*
 * encode.cl — the CKKS encoder on the device (SEAL `CKKSEncoder::encode_internal`): slot values
 * placed at SEAL's matrix_reps_index_map positions with their conjugates, SEAL's inverse DWT
 * with the factor scale / N merged into its last stage, every real part rounded half away from
 * zero and reduced modulo each prime. The forward NTT that ends the encoding is the NTT family's.
 *
 * Bit-exactness with the host encoder (`src/ckks/fft.rs`): every complex product is
 * (a.re*b.re - a.im*b.im, a.re*b.im + a.im*b.re) in that order, and no multiply-add is ever
 * contracted into a fused one (CUDA: the _rn intrinsics, which NVRTC never contracts; OpenCL:
 * FP_CONTRACT OFF). A batch holds `count` polynomials of N complex values (re, im interleaved),
 * polynomial-major.
 */
#include "modarith.h"

#if IS_CUDA
#define DMUL(a, b) __dmul_rn((a), (b))
#define DADD(a, b) __dadd_rn((a), (b))
#define DSUB(a, b) __dsub_rn((a), (b))
#define SIGNBIT(x) signbit(x)
#define AS_DOUBLE(bits) __longlong_as_double((long long)(bits))
#else
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF
#define DMUL(a, b) ((a) * (b))
#define DADD(a, b) ((a) + (b))
#define DSUB(a, b) ((a) - (b))
#define SIGNBIT(x) signbit(x)
#define AS_DOUBLE(bits) as_double(bits)
#endif

/*
 * Slot values to the DWT's input: item i's slot r reads diagonal entry ((r mod n) - g_i) mod n
 * of its source (a diagonal pre-rotated by its giant step g_i and repeated every n slots, as
 * `LinearTransform` encodes it), stored at map[r] and its conjugate at map[r + slots].
 * src: per item `n` doubles (real values, cplx = 0) or `2n` (re, im; cplx = 1) from offset
 * src_off[i] (doubles). One work-item per (item, slot).
 */
KERNEL_FQ void ckks_encode_place(GLOBAL_AS double *out, CONST_AS double *src, CONST_AS u64 *src_off,
                                 CONST_AS u64 *giant, CONST_AS u32 *map, u32 log_slots, u64 n, u32 cplx,
                                 u64 total)
{
    u64 slots = (u64)1 << log_slots;
    for (u64 t = GLOBAL_ID(); t < total; t += GLOBAL_SIZE()) {
        u64 i = t >> log_slots;
        u64 r = t & (slots - 1);
        u64 g = giant[i];
        /* g in [0, n): (r mod n) - g, wrapped */
        u64 s = r % n;
        s = s >= g ? s - g : s + n - g;
        double re, im;
        if (cplx) {
            re = src[src_off[i] + 2 * s];
            im = src[src_off[i] + 2 * s + 1];
        } else {
            re = src[src_off[i] + s];
            im = 0.0;
        }
        GLOBAL_AS double *poly = out + (i << (log_slots + 2));
        u32 a = map[r], b = map[r + slots];
        poly[2 * (u64)a] = re;
        poly[2 * (u64)a + 1] = im;
        poly[2 * (u64)b] = re;
        poly[2 * (u64)b + 1] = -im;
    }
}

/*
 * One stage of SEAL's inverse DWT (DWTHandler::transform_from_rev) but the last: butterflies
 * of half-width 2^log_gap, x' = x + y, y' = (x - y) * root, the root of block j at
 * roots[root_base + j + 1]. One work-item per (item, butterfly): count * N / 2.
 */
KERNEL_FQ void ckks_dwt_inv_stage(GLOBAL_AS double *v, CONST_AS double *roots, u32 log_n, u32 log_gap,
                                  u64 root_base, u64 total)
{
    u64 half_n = (u64)1 << (log_n - 1);
    u64 gap = (u64)1 << log_gap;
    for (u64 t = GLOBAL_ID(); t < total; t += GLOBAL_SIZE()) {
        u64 i = t >> (log_n - 1);
        u64 b = t & (half_n - 1);
        u64 j = b >> log_gap;
        u64 x_at = (i << log_n) + (j << (log_gap + 1)) + (b & (gap - 1));
        u64 y_at = x_at + gap;
        double ur = v[2 * x_at], ui = v[2 * x_at + 1];
        double vr = v[2 * y_at], vi = v[2 * y_at + 1];
        double rr = roots[2 * (root_base + j + 1)], ri = roots[2 * (root_base + j + 1) + 1];
        double dr = DSUB(ur, vr), di = DSUB(ui, vi);
        v[2 * x_at] = DADD(ur, vr);
        v[2 * x_at + 1] = DADD(ui, vi);
        v[2 * y_at] = DSUB(DMUL(dr, rr), DMUL(di, ri));
        v[2 * y_at + 1] = DADD(DMUL(dr, ri), DMUL(di, rr));
    }
}

/*
 * The DWT's last stage (the two halves, root roots[N - 1]) with the factor s (its bits: s_bits)
 * merged as SEAL merges it, then each polynomial's real parts rounded (half away from zero):
 * rounded[(item_base + item) * N + j] holds coefficient j as a double (an integer; the
 * plaintexts' compact form, reduced by ckks_expand_rounded). A real part whose magnitude is not
 * at most `limit` (its bits: limit_bits; NaN included) sets flags[item_base + item] and is
 * stored as 0: the host encoder would refuse it, or it is past the 128-bit path (limit <=
 * 2^126), and the host takes over. v holds this batch's items from 0. One work-item per (item,
 * pair of halves): count * N / 2.
 */
KERNEL_FQ void ckks_dwt_inv_last_round(GLOBAL_AS double *rounded, GLOBAL_AS u64 *flags, CONST_AS double *v,
                                       CONST_AS double *roots, u32 log_n, u64 s_bits, u64 limit_bits,
                                       u64 item_base, u64 total)
{
    u64 n = (u64)1 << log_n;
    u64 half_n = n >> 1;
    double s = AS_DOUBLE(s_bits);
    double limit = AS_DOUBLE(limit_bits);
    double rr = roots[2 * (n - 1)], ri = roots[2 * (n - 1) + 1];
    double sr = DMUL(rr, s), si = DMUL(ri, s);
    for (u64 t = GLOBAL_ID(); t < total; t += GLOBAL_SIZE()) {
        u64 i = t >> (log_n - 1);
        u64 b = t & (half_n - 1);
        u64 x_at = (i << log_n) + b;
        u64 y_at = x_at + half_n;
        double ur = v[2 * x_at], ui = v[2 * x_at + 1];
        double vr = v[2 * y_at], vi = v[2 * y_at + 1];
        /* x' = (u + v) * s (only its real part is used), y' = (u - v) * (root * s) */
        double xr = DMUL(DADD(ur, vr), s);
        double dr = DSUB(ur, vr), di = DSUB(ui, vi);
        double yr = DSUB(DMUL(dr, sr), DMUL(di, si));
        double c[2] = {xr, yr};
        u64 at[2] = {b, b + half_n};
        GLOBAL_AS double *row = rounded + ((item_base + i) << log_n);
        for (int h = 0; h < 2; h++) {
            double r = round(c[h]);
            if (!(fabs(c[h]) <= limit) || !(fabs(r) <= limit)) {
                flags[item_base + i] = 1;
                r = 0.0; /* flagged: any word will do, the host encodes this item */
            }
            row[at[h]] = r;
        }
    }
}

/*
 * Rounded coefficients (ckks_dwt_inv_last_round's, items from first) reduced modulo each of the
 * k primes as SEAL's 128-bit path does (the host's 64-bit path gives the same residues): out row
 * (item * k + p) holds coefficient c mod moduli[p], a negative c as its negation. One work-item
 * per (item, coefficient): count * N.
 */
KERNEL_FQ void ckks_expand_rounded(GLOBAL_AS DWORD *out, CONST_AS double *rounded, CONST_AS u64 *moduli,
                                   CONST_AS u64 *r0, CONST_AS u64 *r1, u32 k, u32 log_n, u64 first,
                                   u64 total)
{
    for (u64 t = GLOBAL_ID(); t < total; t += GLOBAL_SIZE()) {
        u64 i = t >> log_n;
        u64 j = t & (((u64)1 << log_n) - 1);
        double r = rounded[(first << log_n) + t];
        int neg = SIGNBIT(r);
        /* |r| = hi * 2^64 + lo, both parts exact */
        double a = fabs(r);
        double hi_d = floor(DMUL(a, 0x1p-64));
        double lo_d = DSUB(a, DMUL(hi_d, 0x1p64));
        u128_t x;
        x.lo = (u64)lo_d;
        x.hi = (u64)hi_d;
        for (u32 p = 0; p < k; p++) {
            u64 q = moduli[p];
            u64 res = barrett_reduce_128(x, q, r0[p], r1[p]);
            out[((i * k + p) << log_n) + j] = (DWORD)(neg ? neg_mod(res, q) : res);
        }
    }
}
