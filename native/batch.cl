/*
 * batch.cl — the steps of the batched evaluator (src/device/gpu/batch.rs) whose indexing
 * differs from the single-ciphertext kernels: B instances stored limb-major, rows in
 * [poly][limb][instance][N] order (src/ckks/batch.rs), so row r of a polynomial block of L
 * limbs uses prime (r / B) % L. Element-wise steps whose only per-row data is the prime reuse
 * elementwise.cl / keyswitch.cl with the primes replicated B times; these are the rest.
 * Arithmetic is the single-ciphertext kernels', so results are bit-identical per instance.
 */
#include "modarith.h"

#define BATCH_LOOP(total) for (u64 g = GLOBAL_ID(); g < (total); g += GLOBAL_SIZE())

/* out[c][l][b] = a[c][l][b] * pt[l] (multiply_plain with one plaintext of k × N words for
 * every instance). total = size × k × bsz × N. */
KERNEL_FQ void batch_mul_plain_u64(GLOBAL_AS DWORD *out, CONST_AS DWORD *a, CONST_AS DWORD *pt, CONST_AS u64 *moduli,
                                   CONST_AS u64 *r0, CONST_AS u64 *r1, u32 k, u32 bsz, u32 log_n, u64 total)
{
    u64 n = (u64)1 << log_n;
    BATCH_LOOP(total) {
        u32 l = (u32)(((g >> log_n) / bsz) % k);
        out[g] = (DWORD)mul_mod(a[g], pt[((u64)l << log_n) + (g & (n - 1))], moduli[l], r0[l], r1[l]);
    }
}

/* Digit lift: lifted[j][i][b] = t[j][b] mod p_i for digits j < kd, output primes i < kp
 * (the level's primes then P), instances b < bsz (ks_lift_u64 per instance). */
KERNEL_FQ void batch_ks_lift_u64(GLOBAL_AS DWORD *lifted, CONST_AS DWORD *t, CONST_AS u64 *out_moduli,
                                 CONST_AS u64 *out_r1, u32 kd, u32 kp, u32 bsz, u32 log_n)
{
    u64 n = (u64)1 << log_n;
    u64 total = (u64)kd * kp * bsz * n;
    BATCH_LOOP(total) {
        u64 row = g >> log_n;
        u32 b = (u32)(row % bsz);
        u64 ji = row / bsz;
        u32 j = (u32)(ji / kp), i = (u32)(ji % kp);
        lifted[g] = (DWORD)barrett_reduce_64(t[(((u64)j * bsz + b) << log_n) + (g & (n - 1))], out_moduli[i], out_r1[i]);
    }
}

/* Inner product with the key (ks_inner_u64 per instance): prod[c][i][b] = sum_j lifted[j][i][b] ·
 * key[j][c][kprime(i)], one 128-bit accumulation and one reduction per output. */
KERNEL_FQ void batch_ks_inner_u64(GLOBAL_AS DWORD *prod, CONST_AS DWORD *lifted, CONST_AS DWORD *key,
                                  CONST_AS u64 *out_moduli, CONST_AS u64 *out_r0, CONST_AS u64 *out_r1, u32 kd,
                                  u32 kp, u32 key_k, u32 bsz, u32 log_n)
{
    u64 n = (u64)1 << log_n;
    u64 plane = (u64)kp * bsz * n;
    BATCH_LOOP(plane) {
        u32 i = (u32)((g >> log_n) / bsz);
        u64 x = g & (n - 1);
        u32 ki = i + 1 == kp ? key_k - 1 : i;
        u64 q = out_moduli[i], c0 = out_r0[i], c1 = out_r1[i];
        mac_t a0 = mac_zero(), a1 = mac_zero();
        for (u32 j = 0; j < kd; j++) {
            u64 v = lifted[(u64)j * plane + g];
            u64 kb = (((u64)j * 2) * key_k + ki) << log_n;
            a0 = mac_add(a0, v, key[kb + x], q, c1);
            a1 = mac_add(a1, v, key[kb + ((u64)key_k << log_n) + x], q, c1);
        }
        prod[g] = (DWORD)mac_value(a0, q, c0, c1);
        prod[plane + g] = (DWORD)mac_value(a1, q, c0, c1);
    }
}

/* Mod-down / rescale preparation (moddown_prep_u64 per instance): last[c][b] (coefficient
 * form, modulo p_last) → d[c][i][b] = ((last + ⌊p/2⌋) mod p_last) mod q_i + (q_i − ⌊p/2⌋ mod q_i)
 * for i < k, c < polys. */
KERNEL_FQ void batch_moddown_prep_u64(GLOBAL_AS DWORD *d, CONST_AS DWORD *last, CONST_AS u64 *moduli,
                                      CONST_AS u64 *r1, u64 p_last, u64 p_last_r1, u32 k, u32 bsz, u32 polys,
                                      u32 log_n)
{
    u64 n = (u64)1 << log_n;
    u64 total = (u64)polys * k * bsz * n;
    u64 half_p = p_last >> 1;
    BATCH_LOOP(total) {
        u64 row = g >> log_n;
        u32 b = (u32)(row % bsz);
        u64 ci = row / bsz;
        u32 c = (u32)(ci / k), i = (u32)(ci % k);
        u64 v = barrett_reduce_64(last[(((u64)c * bsz + b) << log_n) + (g & (n - 1))] + half_p, p_last, p_last_r1);
        u64 q = moduli[i];
        d[g] = (DWORD)(barrett_reduce_64(v, q, r1[i]) + (q - barrett_reduce_64(half_p, q, r1[i])));
    }
}
