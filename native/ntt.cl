/*
 * ntt.cl — negacyclic NTT / iNTT kernels, batched over rows (instances × RNS limbs).
 *
 * Layout: `data` is rows of N u64 words; row r belongs to prime p = r % k. Tables are SEAL's:
 * roots[p*N + i] / roots_q[p*N + i] (forward root powers in bit-reversed order with Shoup
 * quotients), iroots / iroots_q likewise for the inverse; moduli[p]; for the inverse's last
 * round inv_n[p], inv_n_q[p], last_w[p], last_wq[p] (= inv_root[N-1] * N^{-1}).
 * Forward: Cooley–Tukey with Harvey's lazy butterflies, natural in, bit-reversed out.
 * Inverse: Gentleman–Sande, bit-reversed in, natural out. Outputs are canonical, so every
 * variant is bit-identical to the CPU NTT (and to SEAL's).
 *
 * Variants (paper §V-B/C/D, Fig. 12–15): radix-2 one round per launch through global memory
 * (the naive baseline); radix-8 register kernels doing three rounds per launch; and a
 * shared-local-memory (SLM) kernel that finishes all rounds whose butterflies stay inside one
 * tile of XEHE_SLM_TILE words, in radix-2 or radix-8 steps.
 */
#include "modarith.h"

#ifndef XEHE_SLM_TILE
#define XEHE_SLM_TILE 2048
#endif
/* Row r uses prime (r / XEHE_ROWS_PER_PRIME) % k: 1 (default) for rows in [instance][limb][N]
 * order; B for a batch of B instances stored limb-major, [limb][instance][N] (src/ckks/batch.rs). */
#ifndef XEHE_ROWS_PER_PRIME
#define XEHE_ROWS_PER_PRIME 1
#endif
#define NTT_PRIME(row) ((u32)(((row) / XEHE_ROWS_PER_PRIME) % k))
/* The source row of output row r of a lift pass with lift_div output primes per source row:
 * r / lift_div, or for a limb-major batch (source [row][instance], output [row][prime][instance])
 * (r / (lift_div·B))·B + r % B. */
#define LIFT_SRC_ROW(row, div)                                                                 \
    (((row) / ((div) * XEHE_ROWS_PER_PRIME)) * XEHE_ROWS_PER_PRIME + (row) % XEHE_ROWS_PER_PRIME)
#define ONE ((u64)1)
/* Shared-memory padding: one spare word after every 8, so the strided accesses of the late
 * rounds (stride 8 words in radix-8 steps, stride 2 in radix-2) hit distinct banks. */
#define SLM_PAD(i) ((i) + ((i) >> 3))
#define SLM_WORDS (XEHE_SLM_TILE + XEHE_SLM_TILE / 8)

DECLSPEC void fwd_bf(u64 *x, u64 *y, u64 w, u64 wq, u64 q)
{
    u64 two_q = q << 1;
    u64 u = *x >= two_q ? *x - two_q : *x;
    u64 v = mul_shoup_lazy(*y, w, wq, q);
    *x = u + v;
    *y = u + two_q - v;
}

DECLSPEC u64 fwd_final(u64 x, u64 q)
{
    u64 two_q = q << 1;
    x = x >= two_q ? x - two_q : x;
    return x >= q ? x - q : x;
}

DECLSPEC void inv_bf(u64 *x, u64 *y, u64 w, u64 wq, u64 q)
{
    u64 two_q = q << 1;
    u64 u = *x, v = *y;
    u64 s = u + v;
    *x = s >= two_q ? s - two_q : s;
    *y = mul_shoup_lazy(u + two_q - v, w, wq, q);
}

/* Last inverse round with N^{-1} folded in; outputs reduced to [0, q). */
DECLSPEC void inv_bf_last(u64 *x, u64 *y, u64 in, u64 inq, u64 lw, u64 lwq, u64 q)
{
    u64 two_q = q << 1;
    u64 u = *x, v = *y;
    u64 s = u + v;
    s = s >= two_q ? s - two_q : s;
    u64 a = mul_shoup_lazy(s, in, inq, q);
    u64 b = mul_shoup_lazy(u + two_q - v, lw, lwq, q);
    *x = a >= q ? a - q : a;
    *y = b >= q ? b - q : b;
}

/*
 * Three forward rounds on one group of 8 words v[a*4+b*2+c] (a, b, c: the bits paired in the
 * first, second and third round) whose first-round block is i1 of the 2^log_m blocks (m = 2^log_m).
 */
DECLSPEC void fwd_round8(u64 *v, CONST_AS u64 *rw, CONST_AS u64 *rq, u32 m, u32 i1, u64 q)
{
#pragma unroll
    for (int s = 0; s < 4; s++) fwd_bf(&v[s], &v[s + 4], rw[m + i1], rq[m + i1], q);
#pragma unroll
    for (int a = 0; a < 2; a++) {
        u32 ri = 2 * m + 2 * i1 + a;
#pragma unroll
        for (int c = 0; c < 2; c++) fwd_bf(&v[a * 4 + c], &v[a * 4 + 2 + c], rw[ri], rq[ri], q);
    }
#pragma unroll
    for (int ab = 0; ab < 4; ab++) {
        u32 ri = 4 * m + 4 * i1 + ab;
        fwd_bf(&v[ab * 2], &v[ab * 2 + 1], rw[ri], rq[ri], q);
    }
}

/* ---------------- forward ---------------- */

/* One radix-2 round with 2^log_m blocks over all rows. One thread per butterfly. */
KERNEL_FQ void ntt_fwd_radix2_u64(GLOBAL_AS u64 *data, CONST_AS u64 *roots, CONST_AS u64 *roots_q,
                                  CONST_AS u64 *moduli, u32 k, u32 log_n, u32 log_m, u32 last, u64 total)
{
    /* 32-bit index arithmetic: rows × N < 2^32 words for every supported batch. */
    for (u32 t = (u32)GLOBAL_ID(); t < (u32)total; t += (u32)GLOBAL_SIZE()) {
        u32 n = 1u << log_n;
        u32 row = t >> (log_n - 1);
        u32 j = t & ((n >> 1) - 1);
        u32 p = NTT_PRIME(row);
        u64 q = moduli[p];
        u32 log_gap = log_n - 1 - log_m;
        u32 i = j >> log_gap;
        u32 x = row * n + (i << (log_gap + 1)) + (j & ((1u << log_gap) - 1));
        u32 y = x + (1u << log_gap);
        u32 ri = p * n + (1u << log_m) + i;
        u64 a = data[x], b = data[y];
        fwd_bf(&a, &b, roots[ri], roots_q[ri], q);
        if (last) {
            a = fwd_final(a, q);
            b = fwd_final(b, q);
        }
        data[x] = a;
        data[y] = b;
    }
}

/* Three rounds (2^log_m, 2^(log_m+1), 2^(log_m+2) blocks) on 8 words per thread, in registers. */
/*
 * One radix-8 forward pass (three rounds from 2^log_m blocks) over `total` groups of 8 words.
 * Reads `in`, writes `out` (the same buffer for an in-place pass). With lift_div != 0 the pass
 * is also key switching's digit lift: row r of `out` (prime r % k) reads row r / lift_div of
 * `in` and reduces it modulo its prime (r1: Barrett constants), so the lifted digits are never
 * written before their first NTT pass.
 */
DECLSPEC void fwd_radix8_pass(GLOBAL_AS u64 *out, CONST_AS u64 *in, u32 lift_div, CONST_AS u64 *r1,
                              CONST_AS u64 *roots, CONST_AS u64 *roots_q, CONST_AS u64 *moduli, u32 k,
                              u32 log_n, u32 log_m, u32 last, u64 total, u64 p_last, u64 p_last_r1)
{
    for (u32 t = (u32)GLOBAL_ID(); t < (u32)total; t += (u32)GLOBAL_SIZE()) {
        u32 n = 1u << log_n;
        u32 row = t >> (log_n - 3);
        u32 j = t & ((n >> 3) - 1);
        u32 p = NTT_PRIME(row);
        u64 q = moduli[p];
        u32 log_gap = log_n - 1 - log_m; /* gap of the first of the three rounds */
        u32 g = 1u << log_gap, g4 = g >> 2;
        u32 i1 = j >> (log_gap - 2);
        u32 col = i1 * 2 * g + (j & (g4 - 1));
        u32 m = 1u << log_m;
        CONST_AS u64 *rw = roots + p * n;
        CONST_AS u64 *rq = roots_q + p * n;
        u64 v[8];
        if (lift_div) {
            CONST_AS u64 *src = in + (u64)LIFT_SRC_ROW(row, lift_div) * n + col;
            u64 c1 = r1[p];
            /* Mod-down/rescale correction (p_last != 0): ((x + h) mod p_last) mod q + (q - h mod q). */
            u64 h = p_last >> 1;
            u64 fix = p_last ? q - barrett_reduce_64(h, q, c1) : 0;
#pragma unroll
            for (int s = 0; s < 8; s++) {
                u64 x = src[(s >> 2) * g + ((s >> 1) & 1) * (g >> 1) + (s & 1) * g4];
                if (p_last) x = barrett_reduce_64(x + h, p_last, p_last_r1);
                v[s] = barrett_reduce_64(x, q, c1) + fix;
            }
        } else {
            CONST_AS u64 *src = in + row * n + col;
#pragma unroll
            for (int s = 0; s < 8; s++) v[s] = src[(s >> 2) * g + ((s >> 1) & 1) * (g >> 1) + (s & 1) * g4];
        }
        fwd_round8(v, rw, rq, m, i1, q);
        GLOBAL_AS u64 *dst = out + row * n + col;
#pragma unroll
        for (int s = 0; s < 8; s++) {
            u64 o = v[s];
            if (last) o = fwd_final(o, q);
            dst[(s >> 2) * g + ((s >> 1) & 1) * (g >> 1) + (s & 1) * g4] = o;
        }
    }
}

KERNEL_FQ void ntt_fwd_radix8_u64(GLOBAL_AS u64 *data, CONST_AS u64 *roots, CONST_AS u64 *roots_q,
                                  CONST_AS u64 *moduli, u32 k, u32 log_n, u32 log_m, u32 last, u64 total)
{
    fwd_radix8_pass(data, data, 0, moduli, roots, roots_q, moduli, k, log_n, log_m, last, total, 0, 0);
}

/* The first radix-8 pass of the digit NTTs fused with the digit lift (see fwd_radix8_pass):
 * lifted[j][i] = first three rounds of (t[j] mod p_i), rows digit-major (k = kp primes). */
KERNEL_FQ void ntt_fwd_radix8_lift_u64(GLOBAL_AS u64 *lifted, CONST_AS u64 *t, CONST_AS u64 *r1,
                                       CONST_AS u64 *roots, CONST_AS u64 *roots_q, CONST_AS u64 *moduli,
                                       u32 kp, u32 log_n, u64 total)
{
    fwd_radix8_pass(lifted, t, kp, r1, roots, roots_q, moduli, kp, log_n, 0, 0, total, 0, 0);
}

/* The first radix-8 pass of the NTT in mod-down / rescale fused with the rounding correction:
 * d[c][i] = first three rounds of ((last[c] + ⌊p/2⌋) mod p) mod q_i + (q_i − ⌊p/2⌋ mod q_i),
 * rows poly-major over the k primes q_i (see moddown_prep_u64 in keyswitch.cl). */
KERNEL_FQ void ntt_fwd_radix8_moddown_u64(GLOBAL_AS u64 *d, CONST_AS u64 *last, CONST_AS u64 *r1,
                                          CONST_AS u64 *roots, CONST_AS u64 *roots_q, CONST_AS u64 *moduli,
                                          u32 k, u32 log_n, u64 total, u64 p_last, u64 p_last_r1)
{
    fwd_radix8_pass(d, last, k, r1, roots, roots_q, moduli, k, log_n, 0, 0, total, p_last, p_last_r1);
}

/*
 * The forward rounds from 2^log_m blocks on, on one tile (index tin of its row) already in
 * shared memory; every butterfly of those rounds stays in the tile. radix8 != 0 takes three
 * rounds per barrier where at least three remain. Outputs lazy (< 4q); callers reduce.
 */
DECLSPEC void fwd_slm_rounds(LOCAL_AS u64 *tile, CONST_AS u64 *rw, CONST_AS u64 *rq, u64 q, u32 log_n,
                             u32 log_m, u32 tin, u32 radix8)
{
    const u32 T = XEHE_SLM_TILE;
    u32 lm = log_m;
    while (lm < log_n) {
        u32 log_gap = log_n - 1 - lm;
        u32 m = 1u << lm;
        if (radix8 && lm + 3 <= log_n) {
            u32 g = 1u << log_gap, g4 = g >> 2;
            for (u32 j = LOCAL_ID(); j < T / 8; j += LOCAL_SIZE()) {
                u32 il = j >> (log_gap - 2);
                u32 i1 = tin * (T >> (log_gap + 1)) + il;
                u32 b = il * 2 * g + (j & (g4 - 1));
                u64 v[8];
#pragma unroll
                for (int s = 0; s < 8; s++) v[s] = tile[SLM_PAD(b + (s >> 2) * g + ((s >> 1) & 1) * (g >> 1) + (s & 1) * g4)];
                fwd_round8(v, rw, rq, m, i1, q);
#pragma unroll
                for (int s = 0; s < 8; s++) tile[SLM_PAD(b + (s >> 2) * g + ((s >> 1) & 1) * (g >> 1) + (s & 1) * g4)] = v[s];
            }
            lm += 3;
        } else {
            u32 g = 1u << log_gap;
            for (u32 j = LOCAL_ID(); j < T / 2; j += LOCAL_SIZE()) {
                u32 il = j >> log_gap;
                u32 i = tin * (T >> (log_gap + 1)) + il;
                u32 x = (il << (log_gap + 1)) + (j & (g - 1));
                u64 a = tile[SLM_PAD(x)], c = tile[SLM_PAD(x + g)];
                fwd_bf(&a, &c, rw[m + i], rq[m + i], q);
                tile[SLM_PAD(x)] = a;
                tile[SLM_PAD(x + g)] = c;
            }
            lm += 1;
        }
        SYNC_THREADS();
    }
}

/*
 * All remaining forward rounds from 2^log_m blocks on, inside tiles of XEHE_SLM_TILE words.
 * One work-group per tile. Ends with the final reduction.
 */
KERNEL_FQ void ntt_fwd_slm_u64(GLOBAL_AS u64 *data, CONST_AS u64 *roots, CONST_AS u64 *roots_q,
                               CONST_AS u64 *moduli, u32 k, u32 log_n, u32 log_m, u32 radix8)
{
    LOCAL_ARRAY(u64, tile, SLM_WORDS);
    const u32 T = XEHE_SLM_TILE;
    u32 tiles_per_row = (1u << log_n) / T;
    u32 row = GROUP_ID() / tiles_per_row;
    u32 tin = GROUP_ID() % tiles_per_row;
    u32 p = NTT_PRIME(row);
    u64 q = moduli[p];
    GLOBAL_AS u64 *src = data + ((u64)row << log_n) + (u64)tin * T;
    for (u32 e = LOCAL_ID(); e < T; e += LOCAL_SIZE()) tile[SLM_PAD(e)] = src[e];
    SYNC_THREADS();
    fwd_slm_rounds(tile, roots + ((u64)p << log_n), roots_q + ((u64)p << log_n), q, log_n, log_m, tin, radix8);
    for (u32 e = LOCAL_ID(); e < T; e += LOCAL_SIZE()) src[e] = fwd_final(tile[SLM_PAD(e)], q);
}

/*
 * Key switching's digit NTT fused with its inner product (the NTT-with-Hadamard fusion of
 * seeds/004, applied to SEAL's key switching): for output prime i (group y) and one tile
 * (group x), for every digit j: the SLM rounds of row (j, i) of `lifted` (whose global rounds
 * are done), then prod[c][i] += NTT(lifted[j][i]) * key[j][c][kprime(i)] with 128-bit
 * accumulation, one reduction at the end (mad_mod). Saves writing the transformed digits and
 * reading them back. XEHE_KS_EPT = tile words per thread (the accumulators live in registers).
 */
#ifndef XEHE_KS_EPT
#define XEHE_KS_EPT 8
#endif
/* CUDA only: llvm-spirv 14 mistranslates its arrays of 128-bit accumulators (spirv-val: undefined
 * ID), and only the CUDA backend uses it (as an ablation, XEHE_KS_FUSED=1). */
#if IS_CUDA
KERNEL_FQ void ntt_fwd_slm_keyinner_u64(GLOBAL_AS u64 *prod, CONST_AS u64 *lifted, CONST_AS u64 *key,
                                        CONST_AS u64 *roots, CONST_AS u64 *roots_q, CONST_AS u64 *moduli,
                                        CONST_AS u64 *r0, CONST_AS u64 *r1, u32 kd, u32 kp, u32 key_k, u32 log_n,
                                        u32 log_m, u32 radix8)
{
    LOCAL_ARRAY(u64, tile, SLM_WORDS);
    const u32 T = XEHE_SLM_TILE;
    u32 tin = GROUP_ID();
    u32 i = GROUP_ID_Y();
    u32 ki = i + 1 == kp ? key_k - 1 : i;
    u64 q = moduli[i];
    u64 off = (u64)tin * T;
    CONST_AS u64 *rw = roots + ((u64)i << log_n);
    CONST_AS u64 *rq = roots_q + ((u64)i << log_n);
    u128_t a0[XEHE_KS_EPT], a1[XEHE_KS_EPT];
#pragma unroll
    for (int s = 0; s < XEHE_KS_EPT; s++) a0[s].lo = a0[s].hi = a1[s].lo = a1[s].hi = 0;
    for (u32 j = 0; j < kd; j++) {
        CONST_AS u64 *src = lifted + ((((u64)j * kp + i)) << log_n) + off;
        for (u32 e = LOCAL_ID(); e < T; e += LOCAL_SIZE()) tile[SLM_PAD(e)] = src[e];
        SYNC_THREADS();
        fwd_slm_rounds(tile, rw, rq, q, log_n, log_m, tin, radix8);
        CONST_AS u64 *k0 = key + (((u64)j * 2 * key_k + ki) << log_n) + off;
        CONST_AS u64 *k1 = k0 + ((u64)key_k << log_n);
#pragma unroll
        for (int s = 0; s < XEHE_KS_EPT; s++) {
            u32 e = LOCAL_ID() + s * LOCAL_SIZE();
            u64 v = fwd_final(tile[SLM_PAD(e)], q);
            a0[s] = mad64_wide(v, k0[e], a0[s]);
            a1[s] = mad64_wide(v, k1[e], a1[s]);
        }
        SYNC_THREADS();
    }
    u64 plane = (u64)kp << log_n;
#pragma unroll
    for (int s = 0; s < XEHE_KS_EPT; s++) {
        u64 e = off + LOCAL_ID() + s * LOCAL_SIZE();
        prod[((u64)i << log_n) + e] = barrett_reduce_128(a0[s], q, r0[i], r1[i]);
        prod[plane + ((u64)i << log_n) + e] = barrett_reduce_128(a1[s], q, r0[i], r1[i]);
    }
}
#endif /* IS_CUDA */

/* ---------------- inverse ---------------- */

/* One inverse round with 2^log_m blocks (gap N / 2^(log_m+1)); log_m == 0 is the scaled last round. */
KERNEL_FQ void ntt_inv_radix2_u64(GLOBAL_AS u64 *data, CONST_AS u64 *iroots, CONST_AS u64 *iroots_q,
                                  CONST_AS u64 *moduli, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q,
                                  CONST_AS u64 *last_w, CONST_AS u64 *last_wq, u32 k, u32 log_n, u32 log_m,
                                  u64 total)
{
    for (u32 t = (u32)GLOBAL_ID(); t < (u32)total; t += (u32)GLOBAL_SIZE()) {
        u32 n = 1u << log_n;
        u32 row = t >> (log_n - 1);
        u32 j = t & ((n >> 1) - 1);
        u32 p = NTT_PRIME(row);
        u64 q = moduli[p];
        u32 log_gap = log_n - 1 - log_m;
        u32 i = j >> log_gap;
        u32 x = row * n + (i << (log_gap + 1)) + (j & ((1u << log_gap) - 1));
        u32 y = x + (1u << log_gap);
        u64 a = data[x], b = data[y];
        if (log_m == 0) {
            inv_bf_last(&a, &b, inv_n[p], inv_n_q[p], last_w[p], last_wq[p], q);
        } else {
            u32 ri = p * n + n - (1u << (log_m + 1)) + 1 + i;
            inv_bf(&a, &b, iroots[ri], iroots_q[ri], q);
        }
        data[x] = a;
        data[y] = b;
    }
}

DECLSPEC void inv_round8(u64 *v, CONST_AS u64 *rw, CONST_AS u64 *rq, u32 n, u32 m, u32 i3, u64 q,
                         u64 in, u64 inq, u64 lw, u64 lwq)
{
    /* round 1: m blocks, pairs differ in bit 0 */
#pragma unroll
    for (int ab = 0; ab < 4; ab++) {
        u32 ri = n - 2 * m + 1 + 4 * i3 + ab;
        inv_bf(&v[ab * 2], &v[ab * 2 + 1], rw[ri], rq[ri], q);
    }
    /* round 2: m/2 blocks, pairs differ in bit 1 */
#pragma unroll
    for (int a = 0; a < 2; a++) {
        u32 ri = n - m + 1 + 2 * i3 + a;
#pragma unroll
        for (int c = 0; c < 2; c++) inv_bf(&v[a * 4 + c], &v[a * 4 + 2 + c], rw[ri], rq[ri], q);
    }
    /* round 3: m/4 blocks, pairs differ in bit 2; the scaled last round when m/4 == 1 */
    if (m == 4) {
#pragma unroll
        for (int s = 0; s < 4; s++) inv_bf_last(&v[s], &v[s + 4], in, inq, lw, lwq, q);
    } else {
        u32 ri = n - m / 2 + 1 + i3;
#pragma unroll
        for (int s = 0; s < 4; s++) inv_bf(&v[s], &v[s + 4], rw[ri], rq[ri], q);
    }
}

/* Three inverse rounds (2^log_m, 2^(log_m-1), 2^(log_m-2) blocks) on 8 words per thread. */
KERNEL_FQ void ntt_inv_radix8_u64(GLOBAL_AS u64 *data, CONST_AS u64 *iroots, CONST_AS u64 *iroots_q,
                                  CONST_AS u64 *moduli, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q,
                                  CONST_AS u64 *last_w, CONST_AS u64 *last_wq, u32 k, u32 log_n, u32 log_m,
                                  u64 total)
{
    for (u32 t = (u32)GLOBAL_ID(); t < (u32)total; t += (u32)GLOBAL_SIZE()) {
        u32 n = 1u << log_n;
        u32 row = t >> (log_n - 3);
        u32 j = t & ((n >> 3) - 1);
        u32 p = NTT_PRIME(row);
        u64 q = moduli[p];
        u32 m = 1u << log_m;
        u32 log_gap = log_n - 1 - log_m; /* gap of the first round */
        u32 g = 1u << log_gap;
        u32 i3 = j >> log_gap;
        u32 base = row * n + i3 * 8 * g + (j & (g - 1));
        u64 v[8];
#pragma unroll
        for (int s = 0; s < 8; s++) v[s] = data[base + (s >> 2) * 4 * g + ((s >> 1) & 1) * 2 * g + (s & 1) * g];
        inv_round8(v, iroots + p * n, iroots_q + p * n, n, m, i3, q, inv_n[p], inv_n_q[p], last_w[p], last_wq[p]);
#pragma unroll
        for (int s = 0; s < 8; s++) data[base + (s >> 2) * 4 * g + ((s >> 1) & 1) * 2 * g + (s & 1) * g] = v[s];
    }
}

/*
 * The first inverse rounds (N/2 blocks down to those whose butterflies stay inside one tile),
 * in SLM; stop_log_m is the block count exponent after the last round done here. When it is
 * 0 the scaled last round was done too and the output is canonical.
 */
KERNEL_FQ void ntt_inv_slm_u64(GLOBAL_AS u64 *data, CONST_AS u64 *iroots, CONST_AS u64 *iroots_q,
                               CONST_AS u64 *moduli, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q,
                               CONST_AS u64 *last_w, CONST_AS u64 *last_wq, u32 k, u32 log_n, u32 stop_log_m,
                               u32 radix8)
{
    LOCAL_ARRAY(u64, tile, SLM_WORDS);
    const u32 T = XEHE_SLM_TILE;
    u32 log_t = 0;
    while ((1u << log_t) < T) log_t++;
    u64 n = ONE << log_n;
    u64 tiles_per_row = n >> log_t;
    u64 tid = GROUP_ID();
    u64 row = tid / tiles_per_row;
    u64 tin = tid % tiles_per_row;
    u32 p = NTT_PRIME(row);
    u64 q = moduli[p];
    GLOBAL_AS u64 *src = data + row * n + tin * T;
    CONST_AS u64 *rw = iroots + (u64)p * n;
    CONST_AS u64 *rq = iroots_q + (u64)p * n;
    for (u32 e = LOCAL_ID(); e < T; e += LOCAL_SIZE()) tile[SLM_PAD(e)] = src[e];
    SYNC_THREADS();
    u32 lm = log_n - 1;
    for (;;) {
        u32 log_gap = log_n - 1 - lm;
        u64 m = ONE << lm;
        if (radix8 && lm >= stop_log_m + 2 && lm >= 2) {
            u32 g = 1u << log_gap;
            for (u32 j = LOCAL_ID(); j < T / 8; j += LOCAL_SIZE()) {
                u32 il = j >> log_gap;
                u32 i3 = (u32)tin * (T >> (log_gap + 3)) + il;
                u32 b = il * 8 * g + (j & (g - 1));
                u64 v[8];
#pragma unroll
                for (int s = 0; s < 8; s++) v[s] = tile[SLM_PAD(b + (s >> 2) * 4 * g + ((s >> 1) & 1) * 2 * g + (s & 1) * g)];
                inv_round8(v, rw, rq, (u32)n, (u32)m, i3, q, inv_n[p], inv_n_q[p], last_w[p], last_wq[p]);
#pragma unroll
                for (int s = 0; s < 8; s++) tile[SLM_PAD(b + (s >> 2) * 4 * g + ((s >> 1) & 1) * 2 * g + (s & 1) * g)] = v[s];
            }
            SYNC_THREADS();
            if (lm == stop_log_m + 2) break;
            lm -= 3;
        } else {
            u32 g = 1u << log_gap;
            for (u32 j = LOCAL_ID(); j < T / 2; j += LOCAL_SIZE()) {
                u32 il = j >> log_gap;
                u32 i = (u32)tin * (T >> (log_gap + 1)) + il;
                u32 x = (il << (log_gap + 1)) + (j & (g - 1));
                u64 a = tile[SLM_PAD(x)], c = tile[SLM_PAD(x + g)];
                if (lm == 0) {
                    inv_bf_last(&a, &c, inv_n[p], inv_n_q[p], last_w[p], last_wq[p], q);
                } else {
                    u32 ri = (u32)n - 2 * (u32)m + 1 + i;
                    inv_bf(&a, &c, rw[ri], rq[ri], q);
                }
                tile[SLM_PAD(x)] = a;
                tile[SLM_PAD(x + g)] = c;
            }
            SYNC_THREADS();
            if (lm == stop_log_m) break;
            lm -= 1;
        }
    }
    for (u32 e = LOCAL_ID(); e < T; e += LOCAL_SIZE()) src[e] = tile[SLM_PAD(e)];
}
