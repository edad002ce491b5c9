/*
 * keyswitch.cl — SEAL's key switching with one special prime P, and the shared
 * divide-and-round-by-the-last-prime steps used by rescale (SEAL switch_key_inplace,
 * RNSTool::divide_and_round_q_last_ntt_inplace). See src/ckks/evaluator/keyswitch.rs for the
 * algorithm; the GPU runs the same canonical arithmetic, so results are bit-identical.
 */
#include "modarith.h"

/*
 * Digit lift: lifted[j][i][x] = t[j][x] mod p_i for digits j < kd and output primes i < kp
 * (the level's primes then P). Layout digit-major, so row = j*kp + i uses prime i = row % kp.
 */
KERNEL_FQ void ks_lift_u64(GLOBAL_AS u64 *lifted, CONST_AS u64 *t, CONST_AS u64 *out_moduli,
                           CONST_AS u64 *out_r1, u32 kd, u32 kp, u32 log_n)
{
    u64 n = (u64)1 << log_n;
    u64 total = (u64)kd * kp * n;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u64 row = g >> log_n, x = g & (n - 1);
        u32 j = (u32)(row / kp), i = (u32)(row % kp);
        lifted[g] = barrett_reduce_64(t[((u64)j << log_n) + x], out_moduli[i], out_r1[i]);
    }
}

/*
 * Inner product with the key for output prime i (key limb ki) at word x:
 * prod[c][i][x] = sum_j lifted[j][i][x] * key[j][c][ki][x] mod p_i, c in {0,1}, over kd digits.
 * key: digits × 2 × key_k × N words (each digit a size-2 ciphertext at the key level).
 * One 128-bit accumulation and one reduction per output (mad_mod).
 */
DECLSPEC void ks_inner_at(GLOBAL_AS u64 *prod, CONST_AS u64 *lifted, CONST_AS u64 *key, u64 q, u64 c0, u64 c1,
                          u32 kd, u32 kp, u32 key_k, u32 i, u32 ki, u64 x, u64 total, u32 log_n)
{
    u64 g = ((u64)i << log_n) + x;
#if XEHE_NO_MAD
    u64 s0 = 0, s1 = 0;
    for (u32 j = 0; j < kd; j++) {
        u64 v = lifted[(((u64)j * kp + i) << log_n) + x];
        u64 kb = (((u64)j * 2) * key_k + ki) << log_n;
        s0 = add_mod(s0, mul_mod(v, key[kb + x], q, c0, c1), q);
        s1 = add_mod(s1, mul_mod(v, key[kb + ((u64)key_k << log_n) + x], q, c0, c1), q);
    }
    prod[g] = s0;
    prod[total + g] = s1;
#else
    u128_t a0, a1;
    a0.lo = a0.hi = a1.lo = a1.hi = 0;
    for (u32 j = 0; j < kd; j++) {
        u64 v = lifted[(((u64)j * kp + i) << log_n) + x];
        u64 kb = (((u64)j * 2) * key_k + ki) << log_n;
        a0 = mad64_wide(v, key[kb + x], a0);
        a1 = mad64_wide(v, key[kb + ((u64)key_k << log_n) + x], a1);
    }
    prod[g] = barrett_reduce_128(a0, q, c0, c1);
    prod[total + g] = barrett_reduce_128(a1, q, c0, c1);
#endif
}

/*
 * SEAL's inner product: kp = k+1 output primes (the level's, then P); kprime(i) = i for
 * i < kp-1 and key_k-1 (the special prime) for i = kp-1.
 */
KERNEL_FQ void ks_inner_u64(GLOBAL_AS u64 *prod, CONST_AS u64 *lifted, CONST_AS u64 *key, CONST_AS u64 *out_moduli,
                            CONST_AS u64 *out_r0, CONST_AS u64 *out_r1, u32 kd, u32 kp, u32 key_k, u32 log_n)
{
    u64 n = (u64)1 << log_n;
    u64 total = (u64)kp * n;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u32 i = (u32)(g >> log_n);
        u32 ki = i + 1 == kp ? key_k - 1 : i;
        ks_inner_at(prod, lifted, key, out_moduli[i], out_r0[i], out_r1[i], kd, kp, key_k, i, ki, g & (n - 1), total, log_n);
    }
}

/*
 * Hybrid key switching's inner product (src/ckks/hybrid.rs step 2): kd = beta digits, kp = ell + alpha
 * output limbs (the level's ell data primes, then the alpha special primes, which are the last
 * alpha limbs of the key base): kprime(i) = i for i < ell, else i + key_k - kp.
 */
KERNEL_FQ void ks_inner_hybrid_u64(GLOBAL_AS u64 *prod, CONST_AS u64 *lifted, CONST_AS u64 *key, CONST_AS u64 *out_moduli,
                                   CONST_AS u64 *out_r0, CONST_AS u64 *out_r1, u32 kd, u32 kp, u32 ell, u32 key_k,
                                   u32 log_n)
{
    u64 n = (u64)1 << log_n;
    u64 total = (u64)kp * n;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u32 i = (u32)(g >> log_n);
        u32 ki = i < ell ? i : i + key_k - kp;
        ks_inner_at(prod, lifted, key, out_moduli[i], out_r0[i], out_r1[i], kd, kp, key_k, i, ki, g & (n - 1), total, log_n);
    }
}

/*
 * Mod-down preparation, for polys c < polys: given last[c][x] (coefficient form, < 2*p_last,
 * modulo p_last), writes d[c][i][x] = ((last + half_p) mod p_last) mod q_i + (q_i - half_p mod q_i)
 * for i < k; the caller then NTTs d (values < 2 q_i). half_p = floor(p_last / 2).
 */
KERNEL_FQ void moddown_prep_u64(GLOBAL_AS u64 *d, CONST_AS u64 *last, CONST_AS u64 *moduli, CONST_AS u64 *r1,
                                u64 p_last, u64 p_last_r1, u32 k, u32 polys, u32 log_n)
{
    u64 n = (u64)1 << log_n;
    u64 total = (u64)polys * k * n;
    u64 half_p = p_last >> 1;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u64 row = g >> log_n, x = g & (n - 1);
        u32 c = (u32)(row / k), i = (u32)(row % k);
        u64 v = barrett_reduce_64(last[((u64)c << log_n) + x] + half_p, p_last, p_last_r1);
        u64 q = moduli[i];
        d[g] = barrett_reduce_64(v, q, r1[i]) + (q - barrett_reduce_64(half_p, q, r1[i]));
    }
}

/*
 * Mod-down finish: out[c][i][x] = (acc ? out : 0) + inv_p[i] * (x[c][i][x] + q_i - d[c][i][x]) mod q_i,
 * x and d canonical. x has row stride x_stride polys (k+1 rows per poly for key switching's prod,
 * k+1 for rescale's input), out has k rows per poly.
 */
KERNEL_FQ void moddown_finish_u64(GLOBAL_AS u64 *out, CONST_AS u64 *xs, CONST_AS u64 *d, CONST_AS u64 *moduli,
                                  CONST_AS u64 *inv_p, CONST_AS u64 *inv_p_q, u32 k, u32 x_rows_per_poly,
                                  u32 polys, u32 log_n, u32 acc)
{
    u64 n = (u64)1 << log_n;
    u64 total = (u64)polys * k * n;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u64 row = g >> log_n, x = g & (n - 1);
        u32 c = (u32)(row / k), i = (u32)(row % k);
        u64 q = moduli[i];
        u64 v = xs[(((u64)c * x_rows_per_poly + i) << log_n) + x] + q - d[g];
        u64 r = mul_shoup(v, inv_p[i], inv_p_q[i], q);
        out[g] = acc ? add_mod(out[g], r, q) : r;
    }
}

/* Gather rows: out[c][x] = in[c * stride_rows + row][x] for c < polys (e.g. the last limb of every poly). */
KERNEL_FQ void gather_row_u64(GLOBAL_AS u64 *out, CONST_AS u64 *in, u32 stride_rows, u32 row, u32 polys, u32 log_n)
{
    u64 n = (u64)1 << log_n;
    u64 total = (u64)polys * n;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u64 c = g >> log_n, x = g & (n - 1);
        out[g] = in[((c * stride_rows + row) << log_n) + x];
    }
}

/* Galois automorphism in NTT form: out[r][x] = in[r][table[x]] for every row. */
KERNEL_FQ void galois_permute_u64(GLOBAL_AS u64 *out, CONST_AS u64 *in, CONST_AS u32 *table, u32 log_n, u64 total)
{
    u64 n = (u64)1 << log_n;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u64 row = g >> log_n, x = g & (n - 1);
        out[g] = in[(row << log_n) + table[x]];
    }
}
