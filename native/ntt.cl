/*
 * ntt.cl — negacyclic NTT / iNTT kernels, batched over rows (instances × RNS limbs).
 *
 * Layout: `data` is rows of N u64 words; row r belongs to prime p = r % k. Tables are SEAL's:
 * roots[p*N + i] / roots_q[p*N + i] (forward root powers in bit-reversed order with Shoup
 * quotients), iroots / iroots_q likewise for the inverse; moduli[p]; for the inverse's last
 * round inv_n[p], inv_n_q[p], last_w[p], last_wq[p] (= inv_root[N-1] * N^{-1}).
 * Forward: Cooley–Tukey with Harvey's lazy butterflies (lazier: fwd_bf_r), natural in,
 * bit-reversed out.
 * Inverse: Gentleman–Sande, bit-reversed in, natural out. Outputs are canonical, so every
 * variant is bit-identical to the CPU NTT (and to SEAL's).
 *
 * Variants (paper §V-B/C/D, Fig. 12–15; Shivdikar et al., "Accelerating Polynomial Multiplication
 * for Homomorphic Encryption on GPUs", IEEE SEED 2022, §V; launch plans in src/device/ntt_plan.rs):
 * radix-2 one round per launch through global memory (the naive baseline); radix-4/8/16
 * register kernels doing log2(R) rounds per launch (one generic body, ntt_{fwd,inv}_radix{R});
 * a shared-local-memory (SLM) kernel that finishes all rounds whose butterflies stay inside
 * one tile of XEHE_SLM_TILE words, in radix-2/4/8/16 steps, optionally ending with the
 * sub-group shuffle rounds of SIMD(8|16|32, 8); the 2D / four-step kernels (columns, twist,
 * rows); and the polynomial product with the NTT fused to the Hadamard product.
 */
#include "modarith.h"
#include "cluster.h"
#include "ntt_rows.h"

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

/*
 * Forward butterfly (Harvey's, lazier): x, y in, x + w·y and x − w·y out, all mod q and not
 * reduced. The product comes from mul_shoup_lazy3 (< 3q), so the outputs are u + v and
 * u + 3q − v with u = x, or with `corr` u = x − 8q where x ≥ 8q. Bounds (q < 2^60, SEAL's
 * limit, so 16q < 2^64): with corr, inputs < 16q give u < 8q and outputs < 11q; without,
 * inputs < 13q give outputs < 16q. So a round without the correction may follow any round
 * with it, and the correction is needed on every other round only (FWD_CORR): each radix step
 * ends with a corrected round, and every value between steps (in shared or global memory) is
 * below 11q. fwd_final reduces that to [0, q). `corr` is a literal at every call site.
 */
DECLSPEC void fwd_bf_r(u64 *x, u64 *y, u64 w, u64 wq, u64 q, const u32 corr)
{
    u64 u = *x;
    if (corr) {
        u64 eight_q = q << 3;
        u = u >= eight_q ? u - eight_q : u;
    }
    u64 v = mul_shoup_lazy3(*y, w, wq, q);
    *x = u + v;
    *y = u + 3 * q - v;
}

/* The butterfly of a lone round (radix-2 and shuffle rounds): always corrected. */
DECLSPEC void fwd_bf(u64 *x, u64 *y, u64 w, u64 wq, u64 q)
{
    fwd_bf_r(x, y, w, wq, q, 1);
}

/* Whether round t of a radix-2^r step corrects (fwd_bf_r): the step's last round always, and
 * no two uncorrected rounds in a row across steps: N C N C (r = 4), C N C (r = 3), N C (r = 2),
 * C (r = 1). Six of the sixteen rounds of a 2^16 cluster NTT skip it (radix 16 then 4 × 8). */
#define FWD_CORR(r, t) ((r) == 3 ? (t) != 1 : ((t)&1) || (r) == 1)

/* A forward output (< 16q) reduced to [0, q). */
DECLSPEC u64 fwd_final(u64 x, u64 q)
{
    u64 c = q << 3;
    x = x >= c ? x - c : x;
    c >>= 1;
    x = x >= c ? x - c : x;
    c >>= 1;
    x = x >= c ? x - c : x;
    return x >= q ? x - q : x;
}

/*
 * A forward value between passes (< 16q) as stored: as it is in 64-bit words; below 4q in
 * 32-bit words (word.h: q < 2^30, so 4q fits the word where 11q may not). The residue is the
 * same, so every later round and the final reduction give the same words.
 */
DECLSPEC u64 fwd_store(u64 x, u64 q)
{
#if XEHE_WORD32
    u64 c = q << 3;
    x = x >= c ? x - c : x;
    c >>= 1;
    x = x >= c ? x - c : x;
#else
    (void)q;
#endif
    return x;
}

/*
 * Inverse butterfly (Gentleman–Sande, lazy): x, y < 4q in; x + y and w·(x − y) out, both below
 * 4q: the sum with one conditional subtraction of 4q, the product by mul_shoup_lazy3 (< 3q) of
 * x − y + 4q. With q < 2^60 every word stays below 2^63.
 */
DECLSPEC void inv_bf(u64 *x, u64 *y, u64 w, u64 wq, u64 q)
{
    u64 four_q = q << 2;
    u64 u = *x, v = *y;
    u64 s = u + v;
    *x = s >= four_q ? s - four_q : s;
    *y = mul_shoup_lazy3(u + four_q - v, w, wq, q);
}

/* Last inverse round with N^{-1} folded in: inputs < 4q, outputs reduced to [0, q) (Shoup's
 * product is below 2q for any 64-bit input, so the sum needs no subtraction first). */
DECLSPEC void inv_bf_last(u64 *x, u64 *y, u64 in, u64 inq, u64 lw, u64 lwq, u64 q)
{
    u64 u = *x, v = *y;
    u64 a = mul_shoup_lazy(u + v, in, inq, q);
    u64 b = mul_shoup_lazy(u + (q << 2) - v, lw, lwq, q);
    *x = a >= q ? a - q : a;
    *y = b >= q ? b - q : b;
}

/* Largest register radix of the high-radix kernels (radix-16). */
#define RADIX_MAX 16

/* Forward round t of fwd_round_r (t and r literals, so both loops have constant trip counts). */
DECLSPEC_INLINE void fwd_round_t(u64 *v, const u32 r, const u32 t, CONST_AS u64 *rw, CONST_AS u64 *rq, u32 m, u32 i1,
                                 u64 q)
{
    u32 h = 1u << (r - 1 - t);
#pragma unroll
    for (u32 grp = 0; grp < (1u << t); grp++) {
        u32 ri = ((m + i1) << t) + grp;
        u64 w = rw[ri], wq = rq[ri];
#pragma unroll
        for (u32 c = 0; c < h; c++) fwd_bf_r(&v[grp * 2 * h + c], &v[grp * 2 * h + c + h], w, wq, q, FWD_CORR(r, t));
    }
}

/*
 * `r` forward rounds (radix 2^r, r <= 4) on one group of 2^r words v[s]: bit r-1-t of s is the
 * bit paired in round t; the first round's block is i1 of its m blocks. Callers pass r as a
 * literal so the loops unroll and v stays in registers. With XEHE_NTT_UNROLL (the host's default
 * for 16-CTA cluster plans) the rounds are spelled out: nvcc does not fully unroll the nested
 * loops at r = 4 and keeps v in local memory (128 bytes of stack per work-item).
 */
DECLSPEC_INLINE void fwd_round_r(u64 *v, const u32 r, CONST_AS u64 *rw, CONST_AS u64 *rq, u32 m, u32 i1, u64 q)
{
#ifdef XEHE_NTT_UNROLL
    if (r > 0) fwd_round_t(v, r, 0, rw, rq, m, i1, q);
    if (r > 1) fwd_round_t(v, r, 1, rw, rq, m, i1, q);
    if (r > 2) fwd_round_t(v, r, 2, rw, rq, m, i1, q);
    if (r > 3) fwd_round_t(v, r, 3, rw, rq, m, i1, q);
#else
#pragma unroll
    for (u32 t = 0; t < r; t++) fwd_round_t(v, r, t, rw, rq, m, i1, q);
#endif
}

/* Offset of word s of a forward radix-2^r group whose first round has gap g. */
DECLSPEC_INLINE u32 fwd_off(u32 s, const u32 r, u32 g)
{
    /* sum over t of bit (r-1-t) of s times g >> t */
    return s * (g >> (r - 1));
}

/* Inverse round t of inv_round_r (t and r literals; see fwd_round_r). */
DECLSPEC_INLINE void inv_round_t(u64 *v, const u32 r, const u32 t, CONST_AS u64 *rw, CONST_AS u64 *rq, u32 n, u32 m,
                                 u32 i3, u64 q, u32 scale_last, u64 in, u64 inq, u64 lw, u64 lwq)
{
    u32 h = 1u << t;
    u32 mt = m >> t;
#pragma unroll
    for (u32 grp = 0; grp < (1u << (r - 1 - t)); grp++) {
        u32 ri = n - 2 * mt + 1 + (i3 << (r - 1 - t)) + grp;
        u64 w = rw[ri], wq = rq[ri];
#pragma unroll
        for (u32 c = 0; c < h; c++) {
            u32 s = grp * 2 * h + c;
            if (mt == 1 && scale_last)
                inv_bf_last(&v[s], &v[s + h], in, inq, lw, lwq, q);
            else
                inv_bf(&v[s], &v[s + h], w, wq, q);
        }
    }
}

/*
 * `r` inverse rounds on one group of 2^r words: bit t of s is paired in round t, which has
 * m >> t blocks; i3 is the group's block among the m >> (r-1) of the last round. Table index
 * n - 2(m>>t) + 1 + i (SEAL's inverse layout; n = the table's N). The round with one block is
 * the scaled last round when scale_last != 0. XEHE_NTT_UNROLL_INV spells the rounds out as
 * fwd_round_r does (measurement; under the inverse cluster's 48-register bound it spills more).
 */
DECLSPEC_INLINE void inv_round_r(u64 *v, const u32 r, CONST_AS u64 *rw, CONST_AS u64 *rq, u32 n, u32 m, u32 i3, u64 q,
                                 u32 scale_last, u64 in, u64 inq, u64 lw, u64 lwq)
{
#ifdef XEHE_NTT_UNROLL_INV
    if (r > 0) inv_round_t(v, r, 0, rw, rq, n, m, i3, q, scale_last, in, inq, lw, lwq);
    if (r > 1) inv_round_t(v, r, 1, rw, rq, n, m, i3, q, scale_last, in, inq, lw, lwq);
    if (r > 2) inv_round_t(v, r, 2, rw, rq, n, m, i3, q, scale_last, in, inq, lw, lwq);
    if (r > 3) inv_round_t(v, r, 3, rw, rq, n, m, i3, q, scale_last, in, inq, lw, lwq);
#else
#pragma unroll
    for (u32 t = 0; t < r; t++) inv_round_t(v, r, t, rw, rq, n, m, i3, q, scale_last, in, inq, lw, lwq);
#endif
}

/* Offset of word s of an inverse radix-2^r group whose first round has gap g. */
DECLSPEC_INLINE u32 inv_off(u32 s, const u32 r, u32 g)
{
    /* sum over t of bit t of s times g << t */
    (void)r;
    return s * g;
}

/* ---------------- forward ---------------- */

/* One radix-2 round with 2^log_m blocks over all rows. One thread per butterfly. */
KERNEL_FQ void ntt_fwd_radix2_u64(GLOBAL_AS DWORD *data, CONST_AS u64 *roots, CONST_AS u64 *roots_q,
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
        u64 ri = NTT_ROW(p) + (1u << log_m) + i;
        u64 a = data[x], b = data[y];
        fwd_bf(&a, &b, roots[ri], roots_q[ri], q);
        if (last) {
            a = fwd_final(a, q);
            b = fwd_final(b, q);
        }
        data[x] = fwd_store(a, q);
        data[y] = fwd_store(b, q);
    }
}

/*
 * One radix-2^r forward pass (r rounds from 2^log_m blocks) over `total` groups of 2^r words.
 * Reads `in`, writes `out` (the same buffer for an in-place pass). With lift_div != 0 the pass
 * is also key switching's digit lift: row r of `out` (prime r % k) reads row r / lift_div of
 * `in` and reduces it modulo its prime (r1: Barrett constants), so the lifted digits are never
 * written before their first NTT pass.
 */
DECLSPEC_INLINE void fwd_radix_pass(GLOBAL_AS DWORD *out, CONST_AS DWORD *in, u32 lift_div, CONST_AS u64 *r1,
                             CONST_AS u64 *roots, CONST_AS u64 *roots_q, CONST_AS u64 *moduli, u32 k,
                             u32 log_n, u32 log_m, u32 last, u64 total, u64 p_last, u64 p_last_r1, const u32 r)
{
    for (u32 t = (u32)GLOBAL_ID(); t < (u32)total; t += (u32)GLOBAL_SIZE()) {
        u32 n = 1u << log_n;
        u32 row = t >> (log_n - r);
        u32 j = t & ((n >> r) - 1);
        u32 p = NTT_PRIME(row);
        u64 q = moduli[p];
        u32 log_gap = log_n - 1 - log_m; /* gap of the first of the r rounds */
        u32 g = 1u << log_gap, gr = g >> (r - 1);
        u32 i1 = j >> (log_gap - (r - 1));
        u32 col = i1 * 2 * g + (j & (gr - 1));
        u32 m = 1u << log_m;
        CONST_AS u64 *rw = roots + NTT_ROW(p);
        CONST_AS u64 *rq = roots_q + NTT_ROW(p);
        u64 v[RADIX_MAX];
        if (lift_div) {
            CONST_AS DWORD *src = in + (u64)LIFT_SRC_ROW(row, lift_div) * n + col;
            lift_t lt = lift_init(r1[p], q, p_last, p_last_r1);
#pragma unroll
            for (u32 s = 0; s < (1u << r); s++) v[s] = lift_word(lt, src[fwd_off(s, r, g)], q);
        } else {
            CONST_AS DWORD *src = in + row * n + col;
#pragma unroll
            for (u32 s = 0; s < (1u << r); s++) v[s] = src[fwd_off(s, r, g)];
        }
        fwd_round_r(v, r, rw, rq, m, i1, q);
        GLOBAL_AS DWORD *dst = out + row * n + col;
#pragma unroll
        for (u32 s = 0; s < (1u << r); s++) {
            u64 o = v[s];
            if (last) o = fwd_final(o, q);
            dst[fwd_off(s, r, g)] = fwd_store(o, q);
        }
    }
}

/* ntt_fwd_radix{4,8,16}_u64: one register pass of log2(R) rounds from 2^log_m blocks. */
#define NTT_FWD_RADIX_KERNEL(R, LOG_R)                                                                   \
    KERNEL_FQ void ntt_fwd_radix##R##_u64(GLOBAL_AS DWORD *data, CONST_AS u64 *roots, CONST_AS u64 *roots_q, \
                                          CONST_AS u64 *moduli, u32 k, u32 log_n, u32 log_m, u32 last,    \
                                          u64 total)                                                      \
    {                                                                                                    \
        fwd_radix_pass(data, data, 0, moduli, roots, roots_q, moduli, k, log_n, log_m, last, total, 0, 0, \
                       LOG_R);                                                                           \
    }
NTT_FWD_RADIX_KERNEL(4, 2)
NTT_FWD_RADIX_KERNEL(8, 3)
NTT_FWD_RADIX_KERNEL(16, 4)

/* The first radix-8 pass of the digit NTTs fused with the digit lift (see fwd_radix_pass):
 * lifted[j][i] = first three rounds of (t[j] mod p_i), rows digit-major (k = kp primes). */
KERNEL_FQ void ntt_fwd_radix8_lift_u64(GLOBAL_AS DWORD *lifted, CONST_AS DWORD *t, CONST_AS u64 *r1,
                                       CONST_AS u64 *roots, CONST_AS u64 *roots_q, CONST_AS u64 *moduli,
                                       u32 kp, u32 log_n, u64 total)
{
    fwd_radix_pass(lifted, t, kp, r1, roots, roots_q, moduli, kp, log_n, 0, 0, total, 0, 0, 3);
}

/* The first radix-8 pass of the NTT in mod-down / rescale fused with the rounding correction:
 * d[c][i] = first three rounds of ((last[c] + ⌊p/2⌋) mod p) mod q_i + (q_i − ⌊p/2⌋ mod q_i),
 * rows poly-major over the k primes q_i (see moddown_prep_u64 in keyswitch.cl). */
KERNEL_FQ void ntt_fwd_radix8_moddown_u64(GLOBAL_AS DWORD *d, CONST_AS DWORD *last, CONST_AS u64 *r1,
                                          CONST_AS u64 *roots, CONST_AS u64 *roots_q, CONST_AS u64 *moduli,
                                          u32 k, u32 log_n, u64 total, u64 p_last, u64 p_last_r1)
{
    fwd_radix_pass(d, last, k, r1, roots, roots_q, moduli, k, log_n, 0, 0, total, p_last, p_last_r1, 3);
}

/*
 * SLM kernel modes (the last scalar of the SLM kernels): bits 0-7 = log2 of the register radix
 * of the shared-memory steps (0 or 1: radix-2; 2, 3, 4: radix 4, 8, 16); bits 8-15 = log2 of
 * the words one sub-group of SIMD_W work-items keeps in registers for the last rounds (paper
 * §V-C "SIMD(G, 8)": G/8 register slots of two words per work-item, rounds with gap <= G done
 * with sub-group shuffles; 0 = none).
 */
#define MODE_LOG_RADIX(mode) ((mode)&0xffu)
#define MODE_LOG_SIMD(mode) (((mode) >> 8) & 0xffu)
/* A plan compiles its SLM mode in (XEHE_SLM_MODE, see NttPlan::defines): the SLM kernels then
 * hold only their own step kind, whose registers set the occupancy (the radix-16 path's 16-word
 * arrays otherwise cost every variant: radix-8 at 32K x 1024 went 0.65 -> 1.14 us on an H100).
 * Programs built without it (the SPIR-V of build.rs) take the runtime argument. */
#ifdef XEHE_SLM_MODE
#define SLM_MODE(mode) ((u32)(XEHE_SLM_MODE))
#else
#define SLM_MODE(mode) (mode)
#endif
/* Sub-group width of the shuffle rounds (the paper's SIMD width 8). */
#define SIMD_LOG_W 3u
#define SIMD_W (1u << SIMD_LOG_W)
/* Most register slots per work-item (SIMD(32, 8)): 4 slots = 8 words. */
#define SIMD_MAX_REGS 8
/* Local scratch for the exchanges without sub-group shuffles: one word per work-item. */
#if IS_CUDA
#define XCHG_WORDS 1
#else
#define XCHG_WORDS 256
#endif

/*
 * The word of lane (this lane xor mask) of the sub-group, from converged control flow: a
 * sub-group shuffle where the device has one (and its sub-groups are whole multiples of
 * SIMD_W), else through `scratch` (one word per work-item; two barriers).
 */
DECLSPEC u64 simd_exchange(u64 send, u32 mask, LOCAL_AS u64 *scratch)
{
#if IS_CUDA
    /* Whole warps: the plans give the shuffle rounds >= 32 work-items, a power of two. */
    (void)scratch;
    return SUB_GROUP_SHUFFLE_XOR(send, mask);
#else
#if XEHE_SHUFFLE
    if (SUB_GROUP_MAX_SIZE() % SIMD_W == 0 && LOCAL_SIZE() % SUB_GROUP_MAX_SIZE() == 0)
        return SUB_GROUP_SHUFFLE_XOR(send, mask);
#endif
    scratch[LOCAL_ID()] = send;
    SYNC_THREADS();
    u64 r = scratch[LOCAL_ID() ^ mask];
    SYNC_THREADS();
    return r;
#endif
}

/*
 * Which word of a SIMD block lane `lane`'s register `reg` holds in state b (b = SIMD_LOG_W: the
 * natural layout word = lane + SIMD_W·reg; each exchange at lane bit b' swaps lane bit b' with
 * register bit 0, giving state b'): register bit 0 carries word bit b, lane bits c >= b carry
 * word bits c+1, lane bits below b their own, register bits j >= 1 word bits SIMD_LOG_W + j.
 */
DECLSPEC u32 simd_word(u32 lane, u32 reg, u32 b)
{
    return (lane & ((1u << b) - 1)) | ((lane >> b) << (b + 1)) | ((reg & 1u) << b) | ((reg >> 1) << (SIMD_LOG_W + 1));
}

/* Swap lane bit b with register bit 0 for every register pair (state b+1 <-> state b). */
DECLSPEC void simd_swap(u64 *v, u32 regs, u32 lane, u32 b, LOCAL_AS u64 *scratch)
{
    u32 hi = (lane >> b) & 1u;
    for (u32 u = 0; u < regs; u += 2) {
        u64 recv = simd_exchange(hi ? v[u] : v[u + 1], 1u << b, scratch);
        if (hi)
            v[u] = recv;
        else
            v[u + 1] = recv;
    }
}

/*
 * The last log_b forward rounds (gaps 2^(log_b-1) … 1) of a tile, in registers: SIMD blocks of
 * 2^log_b words, SIMD_W work-items each, 2^(log_b-3) registers per work-item. Rounds whose pairs
 * differ in a register bit are local; the last SIMD_LOG_W are sub-group exchanges (Fig. 10/11).
 * Reads and writes the tile (lazy values); the caller synchronizes afterwards.
 */
DECLSPEC void fwd_simd_rounds(LOCAL_AS u64 *tile, u32 T, CONST_AS u64 *rw, CONST_AS u64 *rq, u64 q, u32 log_n,
                              u32 tin, u32 log_b, LOCAL_AS u64 *scratch)
{
    u32 regs = 1u << (log_b - SIMD_LOG_W);
    u32 lm0 = log_n - log_b;
    for (u32 base = 0; base < (T >> (log_b - SIMD_LOG_W)); base += LOCAL_SIZE()) {
        u32 id = base + LOCAL_ID();
        u32 lane = id & (SIMD_W - 1);
        u32 blk = (id >> SIMD_LOG_W) << log_b;
        u64 v[SIMD_MAX_REGS];
        for (u32 g = 0; g < regs; g++) v[g] = tile[SLM_PAD(blk + simd_word(lane, g, SIMD_LOG_W))];
        for (u32 b = log_b - 1; b + 1 > 0; b--) {
            u32 lm = lm0 + (log_b - 1 - b);
            u32 m = 1u << lm;
            u32 lb = b >= SIMD_LOG_W ? SIMD_LOG_W : b;
            if (b < SIMD_LOG_W) simd_swap(v, regs, lane, b, scratch);
            u32 h = b >= SIMD_LOG_W ? 1u << (b - SIMD_LOG_W) : 1u;
            for (u32 g = 0; g < regs; g++) {
                if (g & h) continue;
                u32 x = blk + simd_word(lane, g, lb);
                u32 i = (tin * (T >> (b + 1)) + (x >> (b + 1))) & (m - 1);
                fwd_bf(&v[g], &v[g + h], rw[m + i], rq[m + i], q);
            }
        }
        for (u32 g = 0; g < regs; g++) tile[SLM_PAD(blk + simd_word(lane, g, 0))] = v[g];
    }
}

/*
 * One forward step of r rounds from 2^lm blocks on a tile of T words: each work-item's groups of
 * 2^r words come from the tile in shared memory, or with from_global straight from the tile's
 * words in global memory `gtile`; they go back to the tile, or with to_global straight to
 * `gtile` with the final reduction (the register-resident kernel's first and last steps). Callers
 * pass r, from_global and to_global as literals (the branches and loops fold).
 */
DECLSPEC_INLINE void fwd_tile_step(LOCAL_AS u64 *tile, GLOBAL_AS DWORD *gtile, u32 T, CONST_AS u64 *rw, CONST_AS u64 *rq,
                                   u64 q, u32 log_n, u32 lm, u32 tin, const u32 r, const u32 from_global,
                                   const u32 to_global)
{
    u32 log_gap = log_n - 1 - lm;
    u32 m = 1u << lm;
    u32 g = 1u << log_gap, gr = g >> (r - 1);
    for (u32 j = LOCAL_ID(); j < (T >> r); j += LOCAL_SIZE()) {
        u32 il = j >> (log_gap - (r - 1));
        /* `& (m - 1)`: a tile may hold several transforms of 2^log_n words (four-step columns). */
        u32 i1 = (tin * (T >> (log_gap + 1)) + il) & (m - 1);
        u32 b = il * 2 * g + (j & (gr - 1));
        u64 v[RADIX_MAX];
#pragma unroll
        for (u32 s = 0; s < (1u << r); s++) {
            u32 e = b + fwd_off(s, r, g);
            v[s] = from_global ? gtile[e] : tile[SLM_PAD(e)];
        }
        fwd_round_r(v, r, rw, rq, m, i1, q);
#pragma unroll
        for (u32 s = 0; s < (1u << r); s++) {
            u32 e = b + fwd_off(s, r, g);
            if (to_global)
                gtile[e] = fwd_final(v[s], q);
            else
                tile[SLM_PAD(e)] = v[s];
        }
    }
}

/* One forward shared-memory step of r rounds from 2^lm blocks on a tile of T words. */
DECLSPEC_INLINE void fwd_slm_step(LOCAL_AS u64 *tile, u32 T, CONST_AS u64 *rw, CONST_AS u64 *rq, u64 q, u32 log_n, u32 lm,
                           u32 tin, const u32 r)
{
    fwd_tile_step(tile, (GLOBAL_AS DWORD *)0, T, rw, rq, q, log_n, lm, tin, r, 0, 0);
}

/*
 * The forward rounds from 2^log_m blocks on (of a transform of 2^log_n words), on a tile of T
 * words (index tin of its row) already in shared memory; every butterfly of those rounds stays
 * in the tile. `mode`: see MODE_LOG_RADIX / MODE_LOG_SIMD. Outputs lazy (< 16q); callers reduce.
 */
DECLSPEC void fwd_slm_rounds_to(LOCAL_AS u64 *tile, u32 T, CONST_AS u64 *rw, CONST_AS u64 *rq, u64 q, u32 log_n,
                                u32 log_m, u32 end, u32 tin, u32 mode, LOCAL_AS u64 *scratch)
{
    u32 lr = MODE_LOG_RADIX(SLM_MODE(mode)), ls = end == log_n ? MODE_LOG_SIMD(SLM_MODE(mode)) : 0;
    u32 stop = end - ls; /* the shuffle rounds start here */
    u32 lm = log_m;
    /* Sequential loops, one per step kind (llvm-spirv 14 mis-structures a loop over an if-chain). */
    if (lr >= 2) {
        for (; lm + lr <= stop; lm += lr) {
            if (lr == 4)
                fwd_slm_step(tile, T, rw, rq, q, log_n, lm, tin, 4);
            else if (lr == 3)
                fwd_slm_step(tile, T, rw, rq, q, log_n, lm, tin, 3);
            else
                fwd_slm_step(tile, T, rw, rq, q, log_n, lm, tin, 2);
            SYNC_THREADS();
        }
    }
    for (; lm < stop; lm++) {
        fwd_slm_step(tile, T, rw, rq, q, log_n, lm, tin, 1);
        SYNC_THREADS();
    }
    if (ls && lm < end) {
        fwd_simd_rounds(tile, T, rw, rq, q, log_n, tin, ls, scratch);
        SYNC_THREADS();
    }
}

/* fwd_slm_rounds_to up to the last round (end = log_n). */
DECLSPEC void fwd_slm_rounds(LOCAL_AS u64 *tile, u32 T, CONST_AS u64 *rw, CONST_AS u64 *rq, u64 q, u32 log_n,
                             u32 log_m, u32 tin, u32 mode, LOCAL_AS u64 *scratch)
{
    fwd_slm_rounds_to(tile, T, rw, rq, q, log_n, log_m, log_n, tin, mode, scratch);
}

/*
 * All remaining forward rounds from 2^log_m blocks on, inside tiles of XEHE_SLM_TILE words.
 * One work-group per tile. Ends with the final reduction.
 */
KERNEL_FQ void ntt_fwd_slm_u64(GLOBAL_AS DWORD *data, CONST_AS u64 *roots, CONST_AS u64 *roots_q,
                               CONST_AS u64 *moduli, u32 k, u32 log_n, u32 log_m, u32 mode)
{
    LOCAL_ARRAY(u64, tile, SLM_WORDS);
    LOCAL_ARRAY(u64, scratch, XCHG_WORDS);
    const u32 T = XEHE_SLM_TILE;
    u32 tiles_per_row = (1u << log_n) / T;
    u32 row = GROUP_ID() / tiles_per_row;
    u32 tin = GROUP_ID() % tiles_per_row;
    u32 p = NTT_PRIME(row);
    u64 q = moduli[p];
    GLOBAL_AS DWORD *src = data + ((u64)row << log_n) + (u64)tin * T;
    for (u32 e = LOCAL_ID(); e < T; e += LOCAL_SIZE()) tile[SLM_PAD(e)] = src[e];
    SYNC_THREADS();
    fwd_slm_rounds(tile, T, roots + NTT_ROW(p), roots_q + NTT_ROW(p), q, log_n, log_m, tin, mode,
                   scratch);
    for (u32 e = LOCAL_ID(); e < T; e += LOCAL_SIZE()) src[e] = fwd_final(tile[SLM_PAD(e)], q);
}

/*
 * STEP(R) for the run-time radix exponent r (1 <= r <= lr <= 4) with R a literal, so each
 * expansion unrolls into registers; the cases above lr fold away where the SLM mode is compiled
 * in (XEHE_SLM_MODE), keeping the radix-16 arrays out of the radix-8 programs.
 */
#define RADIX_CASES(r, lr, STEP)                                                                              \
    do {                                                                                                      \
        if ((lr) >= 4 && (r) == 4)                                                                            \
            STEP(4);                                                                                          \
        else if ((lr) >= 3 && (r) == 3)                                                                       \
            STEP(3);                                                                                          \
        else if ((r) == 2)                                                                                    \
            STEP(2);                                                                                          \
        else                                                                                                  \
            STEP(1);                                                                                          \
    } while (0)

/*
 * Register-resident SLM rounds (radix8-reg): the rounds of ntt_fwd_slm_u64 in steps of 2^lr
 * (lr = MODE_LOG_RADIX), a remainder of fewer rounds as one smaller first step, where the first
 * step reads its groups straight from the tile's words in global memory (`gtile`) into registers
 * and the last writes its registers straight back with the final reduction: the tile crosses
 * shared memory only between steps (no copy-in / copy-out passes, two barriers fewer).
 */
#define FWD_REG_STEP(R, FG, TG) fwd_tile_step(tile, gtile, T, rw, rq, q, log_n, lm, tin, R, FG, TG)
#define FWD_REG_WHOLE(R) FWD_REG_STEP(R, 1, 1)
#define FWD_REG_FIRST(R) FWD_REG_STEP(R, 1, 0)
#define FWD_REG_MID(R) FWD_REG_STEP(R, 0, 0)
#define FWD_REG_LAST(R) FWD_REG_STEP(R, 0, 1)
DECLSPEC void fwd_reg_rounds(LOCAL_AS u64 *tile, GLOBAL_AS DWORD *gtile, u32 T, CONST_AS u64 *rw, CONST_AS u64 *rq, u64 q,
                             u32 log_n, u32 log_m, u32 tin, u32 mode)
{
    u32 lr = MODE_LOG_RADIX(SLM_MODE(mode));
    lr = lr < 1 ? 1 : lr;
    u32 rounds = log_n - log_m;
    u32 r0 = rounds % lr == 0 ? lr : rounds % lr;
    u32 lm = log_m;
    if (r0 == rounds) {
        RADIX_CASES(r0, lr, FWD_REG_WHOLE);
    } else {
        RADIX_CASES(r0, lr, FWD_REG_FIRST);
        SYNC_THREADS();
        for (lm += r0; lm + lr < log_n; lm += lr) {
            RADIX_CASES(lr, lr, FWD_REG_MID);
            SYNC_THREADS();
        }
        RADIX_CASES(lr, lr, FWD_REG_LAST);
    }
}

/* The row, tile index and prime of this work-group's tile of T words. */
typedef struct { u32 row, tin, p; } tile_id_t;

DECLSPEC tile_id_t tile_of_group(u32 k, u32 log_n, u32 T)
{
    tile_id_t t;
    u32 tiles_per_row = (1u << log_n) / T;
    t.row = GROUP_ID() / tiles_per_row;
    t.tin = GROUP_ID() % tiles_per_row;
    t.p = NTT_PRIME(t.row);
    return t;
}

/* ntt_fwd_slm_u64 with register-resident first and last steps (fwd_reg_rounds); same arguments. */
KERNEL_FQ void ntt_fwd_reg_u64(GLOBAL_AS DWORD *data, CONST_AS u64 *roots, CONST_AS u64 *roots_q,
                               CONST_AS u64 *moduli, u32 k, u32 log_n, u32 log_m, u32 mode)
{
    LOCAL_ARRAY(u64, tile, SLM_WORDS);
    const u32 T = XEHE_SLM_TILE;
    tile_id_t t = tile_of_group(k, log_n, T);
    fwd_reg_rounds(tile, data + ((u64)t.row << log_n) + (u64)t.tin * T, T, roots + NTT_ROW(t.p),
                   roots_q + NTT_ROW(t.p), moduli[t.p], log_n, log_m, t.tin, mode);
}

/* ---------------- inverse ---------------- */

/* One inverse round with 2^log_m blocks (gap N / 2^(log_m+1)); log_m == 0 is the scaled last round. */
KERNEL_FQ void ntt_inv_radix2_u64(GLOBAL_AS DWORD *data, CONST_AS u64 *iroots, CONST_AS u64 *iroots_q,
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
            u64 ri = NTT_ROW(p) + n - (1u << (log_m + 1)) + 1 + i;
            inv_bf(&a, &b, iroots[ri], iroots_q[ri], q);
        }
        data[x] = a;
        data[y] = b;
    }
}

/* One radix-2^r inverse pass (r rounds from 2^log_m blocks down) over `total` groups. */
DECLSPEC_INLINE void inv_radix_pass(GLOBAL_AS DWORD *data, CONST_AS u64 *iroots, CONST_AS u64 *iroots_q, CONST_AS u64 *moduli,
                             CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q, CONST_AS u64 *last_w, CONST_AS u64 *last_wq,
                             u32 k, u32 log_n, u32 log_m, u64 total, const u32 r)
{
    for (u32 t = (u32)GLOBAL_ID(); t < (u32)total; t += (u32)GLOBAL_SIZE()) {
        u32 n = 1u << log_n;
        u32 row = t >> (log_n - r);
        u32 j = t & ((n >> r) - 1);
        u32 p = NTT_PRIME(row);
        u64 q = moduli[p];
        u32 m = 1u << log_m;
        u32 log_gap = log_n - 1 - log_m; /* gap of the first round */
        u32 g = 1u << log_gap;
        u32 i3 = j >> log_gap;
        u32 base = row * n + (i3 << r) * g + (j & (g - 1));
        u64 v[RADIX_MAX];
#pragma unroll
        for (u32 s = 0; s < (1u << r); s++) v[s] = data[base + inv_off(s, r, g)];
        inv_round_r(v, r, iroots + NTT_ROW(p), iroots_q + NTT_ROW(p), n, m, i3, q, 1, inv_n[p], inv_n_q[p], last_w[p],
                    last_wq[p]);
#pragma unroll
        for (u32 s = 0; s < (1u << r); s++) data[base + inv_off(s, r, g)] = v[s];
    }
}

/* ntt_inv_radix{4,8,16}_u64: log2(R) inverse rounds (2^log_m blocks down) per thread, in registers. */
#define NTT_INV_RADIX_KERNEL(R, LOG_R)                                                                      \
    KERNEL_FQ void ntt_inv_radix##R##_u64(GLOBAL_AS DWORD *data, CONST_AS u64 *iroots, CONST_AS u64 *iroots_q, \
                                          CONST_AS u64 *moduli, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q,    \
                                          CONST_AS u64 *last_w, CONST_AS u64 *last_wq, u32 k, u32 log_n,       \
                                          u32 log_m, u64 total)                                              \
    {                                                                                                       \
        inv_radix_pass(data, iroots, iroots_q, moduli, inv_n, inv_n_q, last_w, last_wq, k, log_n, log_m, total,  \
                       LOG_R);                                                                              \
    }
NTT_INV_RADIX_KERNEL(4, 2)
NTT_INV_RADIX_KERNEL(8, 3)
NTT_INV_RADIX_KERNEL(16, 4)

/* Scalars of the inverse's scaled last round, for prime p. */
typedef struct { u64 in, inq, lw, lwq; } inv_last_t;

/*
 * The first log_b inverse rounds (gaps 1 … 2^(log_b-1)) of a tile in registers: the mirror
 * of fwd_simd_rounds (exchanges first, then register-local rounds). n = the table's N.
 */
DECLSPEC void inv_simd_rounds(LOCAL_AS u64 *tile, u32 T, CONST_AS u64 *rw, CONST_AS u64 *rq, u64 q, u32 log_n,
                              u32 n, u32 tin, u32 log_b, u32 scale_last, inv_last_t il, LOCAL_AS u64 *scratch)
{
    u32 regs = 1u << (log_b - SIMD_LOG_W);
    for (u32 base = 0; base < (T >> (log_b - SIMD_LOG_W)); base += LOCAL_SIZE()) {
        u32 id = base + LOCAL_ID();
        u32 lane = id & (SIMD_W - 1);
        u32 blk = (id >> SIMD_LOG_W) << log_b;
        u64 v[SIMD_MAX_REGS];
        for (u32 g = 0; g < regs; g++) v[g] = tile[SLM_PAD(blk + simd_word(lane, g, 0))];
        for (u32 b = 0; b < log_b; b++) {
            u32 m = 1u << (log_n - 1 - b);
            u32 lb = b >= SIMD_LOG_W ? SIMD_LOG_W : b;
            u32 h = b >= SIMD_LOG_W ? 1u << (b - SIMD_LOG_W) : 1u;
            for (u32 g = 0; g < regs; g++) {
                if (g & h) continue;
                u32 x = blk + simd_word(lane, g, lb);
                u32 i = (tin * (T >> (b + 1)) + (x >> (b + 1))) & (m - 1);
                u32 ri = n - 2 * m + 1 + i;
                if (m == 1 && scale_last)
                    inv_bf_last(&v[g], &v[g + h], il.in, il.inq, il.lw, il.lwq, q);
                else
                    inv_bf(&v[g], &v[g + h], rw[ri], rq[ri], q);
            }
            if (b < SIMD_LOG_W) simd_swap(v, regs, lane, b, scratch);
        }
        for (u32 g = 0; g < regs; g++) tile[SLM_PAD(blk + simd_word(lane, g, SIMD_LOG_W))] = v[g];
    }
}

/* One inverse shared-memory step of r rounds from 2^lm blocks down, on a tile of T words. */
DECLSPEC_INLINE void inv_slm_step(LOCAL_AS u64 *tile, u32 T, CONST_AS u64 *rw, CONST_AS u64 *rq, u64 q, u32 log_n, u32 n,
                           u32 lm, u32 tin, u32 scale_last, inv_last_t il, const u32 r)
{
    u32 log_gap = log_n - 1 - lm;
    u32 m = 1u << lm;
    u32 g = 1u << log_gap;
    for (u32 j = LOCAL_ID(); j < (T >> r); j += LOCAL_SIZE()) {
        u32 l3 = j >> log_gap;
        u32 i3 = (tin * (T >> (log_gap + r)) + l3) & ((m >> (r - 1)) - 1);
        u32 b = (l3 << r) * g + (j & (g - 1));
        u64 v[RADIX_MAX];
#pragma unroll
        for (u32 s = 0; s < (1u << r); s++) v[s] = tile[SLM_PAD(b + inv_off(s, r, g))];
        inv_round_r(v, r, rw, rq, n, m, i3, q, scale_last, il.in, il.inq, il.lw, il.lwq);
#pragma unroll
        for (u32 s = 0; s < (1u << r); s++) tile[SLM_PAD(b + inv_off(s, r, g))] = v[s];
    }
}

/*
 * The inverse rounds from N/2 blocks (of a transform of 2^log_n words; tables of n words) down
 * to 2^stop_log_m blocks, on a tile of T words in shared memory. The one-block round is the
 * scaled last round when scale_last != 0 (output canonical); otherwise outputs are < 4q.
 */
DECLSPEC void inv_slm_rounds_from(LOCAL_AS u64 *tile, u32 T, CONST_AS u64 *rw, CONST_AS u64 *rq, u64 q,
                                  u32 log_n, u32 n, u32 top, u32 stop_log_m, u32 tin, u32 mode, u32 scale_last,
                                  inv_last_t il, LOCAL_AS u64 *scratch)
{
    u32 lr = MODE_LOG_RADIX(SLM_MODE(mode)), ls = MODE_LOG_SIMD(SLM_MODE(mode));
    /* top - 1 = the block-count exponent of the next round. */
    if (ls && top == log_n && top >= ls + stop_log_m) {
        inv_simd_rounds(tile, T, rw, rq, q, log_n, n, tin, ls, scale_last, il, scratch);
        SYNC_THREADS();
        top -= ls;
    }
    /* Sequential loops, one per step kind (see fwd_slm_rounds_to). */
    if (lr >= 2) {
        for (; top >= stop_log_m + lr; top -= lr) {
            if (lr == 4)
                inv_slm_step(tile, T, rw, rq, q, log_n, n, top - 1, tin, scale_last, il, 4);
            else if (lr == 3)
                inv_slm_step(tile, T, rw, rq, q, log_n, n, top - 1, tin, scale_last, il, 3);
            else
                inv_slm_step(tile, T, rw, rq, q, log_n, n, top - 1, tin, scale_last, il, 2);
            SYNC_THREADS();
        }
    }
    for (; top > stop_log_m; top--) {
        inv_slm_step(tile, T, rw, rq, q, log_n, n, top - 1, tin, scale_last, il, 1);
        SYNC_THREADS();
    }
}

/* inv_slm_rounds_from from the first inverse round (N/2 blocks). */
DECLSPEC void inv_slm_rounds(LOCAL_AS u64 *tile, u32 T, CONST_AS u64 *rw, CONST_AS u64 *rq, u64 q, u32 log_n,
                             u32 n, u32 stop_log_m, u32 tin, u32 mode, u32 scale_last, inv_last_t il,
                             LOCAL_AS u64 *scratch)
{
    inv_slm_rounds_from(tile, T, rw, rq, q, log_n, n, log_n, stop_log_m, tin, mode, scale_last, il, scratch);
}

DECLSPEC inv_last_t inv_last(CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q, CONST_AS u64 *last_w,
                             CONST_AS u64 *last_wq, u32 p)
{
    inv_last_t il;
    il.in = inv_n[p];
    il.inq = inv_n_q[p];
    il.lw = last_w[p];
    il.lwq = last_wq[p];
    return il;
}

/*
 * The first inverse rounds (N/2 blocks down to those whose butterflies stay inside one tile),
 * in SLM; stop_log_m is the block count exponent after the last round done here. When it is
 * 0 the scaled last round was done too and the output is canonical.
 */
KERNEL_FQ void ntt_inv_slm_u64(GLOBAL_AS DWORD *data, CONST_AS u64 *iroots, CONST_AS u64 *iroots_q,
                               CONST_AS u64 *moduli, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q,
                               CONST_AS u64 *last_w, CONST_AS u64 *last_wq, u32 k, u32 log_n, u32 stop_log_m,
                               u32 mode)
{
    LOCAL_ARRAY(u64, tile, SLM_WORDS);
    LOCAL_ARRAY(u64, scratch, XCHG_WORDS);
    const u32 T = XEHE_SLM_TILE;
    u32 n = 1u << log_n;
    u32 tiles_per_row = n / T;
    u32 row = GROUP_ID() / tiles_per_row;
    u32 tin = GROUP_ID() % tiles_per_row;
    u32 p = NTT_PRIME(row);
    u64 q = moduli[p];
    GLOBAL_AS DWORD *src = data + ((u64)row << log_n) + (u64)tin * T;
    for (u32 e = LOCAL_ID(); e < T; e += LOCAL_SIZE()) tile[SLM_PAD(e)] = src[e];
    SYNC_THREADS();
    inv_slm_rounds(tile, T, iroots + NTT_ROW(p), iroots_q + NTT_ROW(p), q, log_n, n, stop_log_m, tin,
                   mode, 1, inv_last(inv_n, inv_n_q, last_w, last_wq, p), scratch);
    for (u32 e = LOCAL_ID(); e < T; e += LOCAL_SIZE()) src[e] = tile[SLM_PAD(e)];
}

/* ---------------- one pass with thread-block clusters (radix8-cluster; CUDA sm_90+) ----------------
 *
 * The radix-8 plan's two passes through global memory (the global radix-2^c pass, then the SLM
 * kernel per tile of T words) in one kernel: the C = N / T = 2^c tiles of a row are the C CTAs of
 * one thread-block cluster, whose shared memories are addressable from each other (Hopper
 * distributed shared memory). Forward: each CTA reads its share of the columns {j + s·T : s < C}
 * from global memory, does the first c rounds in registers and stores word s into CTA s's tile
 * (a remote store for s != rank); after a cluster barrier every CTA finishes its tile as the SLM
 * kernel does and writes it once. The inverse mirrors it (tile rounds, barrier, the last c rounds
 * from remote loads straight to global memory, a barrier so no CTA exits while its tile is
 * read). DRAM sees one
 * read and one write of the data instead of two or three of each. Compiled only into the plan's
 * program (XEHE_CLUSTER = C <= 16; above 8, the portable size, the host allows non-portable
 * cluster sizes for the function; XEHE_CLUSTER_ITEM = T / local >= C).
 */
#if defined(XEHE_CLUSTER) && IS_CUDA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define LOG_CLUSTER (XEHE_CLUSTER == 16 ? 4u : XEHE_CLUSTER == 8 ? 3u : XEHE_CLUSTER == 4 ? 2u : XEHE_CLUSTER == 2 ? 1u : 0u)
/* The columns of the cross-CTA rounds each work-item takes: its words (XEHE_CLUSTER_ITEM = T /
 * local, from the plan) over the cluster size. */
#define CLUSTER_COLS (XEHE_CLUSTER_ITEM / XEHE_CLUSTER)
/*
 * Resident CTAs per SM the register allocation must allow (__launch_bounds__). The inverse,
 * whose remote loads stall, gains from occupancy: 5 CTAs (<= 51 registers, with the host's
 * shared-memory carveout at its maximum) took 32K x 1024 from 0.76 to 0.63 us and 64K from 1.80
 * to 1.54 on an H100; the forward lost at 16K/64K with its radix-16 group in local memory, so it
 * is unbounded unless XEHE_CLUSTER_MIN_BLOCKS says otherwise: the host sets 4 for 16-CTA clusters,
 * whose rounds are spelled out (XEHE_NTT_UNROLL; src/device/ntt_plan.rs CLUSTER16_MIN_BLOCKS).
 */
#ifndef XEHE_CLUSTER_INV_MIN_BLOCKS
#define XEHE_CLUSTER_INV_MIN_BLOCKS 5
#endif
#define CLUSTER_LOCAL (XEHE_SLM_TILE / XEHE_CLUSTER_ITEM)
/* Words of the mod-down finish's epilogue whose loads are in flight together (moddown_fin_epilogue). */
#ifndef CLUSTER_FIN_BATCH
#define CLUSTER_FIN_BATCH (XEHE_CLUSTER_ITEM >= 8 ? 8 : XEHE_CLUSTER_ITEM)
#endif
#ifdef XEHE_CLUSTER_MIN_BLOCKS
#define CLUSTER_BOUNDS __launch_bounds__(CLUSTER_LOCAL, XEHE_CLUSTER_MIN_BLOCKS)
#else
#define CLUSTER_BOUNDS
#endif
#define KERNEL_CLUSTER_FQ extern "C" __global__ void __cluster_dims__(XEHE_CLUSTER, 1, 1) CLUSTER_BOUNDS
#define KERNEL_CLUSTER_INV_FQ                                                                          \
    extern "C" __global__ void __cluster_dims__(XEHE_CLUSTER, 1, 1)                                    \
        __launch_bounds__(CLUSTER_LOCAL, XEHE_CLUSTER_INV_MIN_BLOCKS)

/* Column `cc` of this work-item's share of the cross-CTA rounds (j < T). */
#define CLUSTER_COL(rank, cc) ((rank) * (XEHE_SLM_TILE / XEHE_CLUSTER) + LOCAL_ID() + (cc) * LOCAL_SIZE())

/*
 * The forward cluster NTT of one row under prime q (tables rw, rq): this cluster's C CTAs hold
 * its C tiles. The input row is `src`, through lift_word when `lift` (the fused digit lift /
 * mod-down correction of fwd_radix_pass); the canonical output goes to row `dst`.
 */
/* fwd_cluster_row up to the last round: returns this CTA's tile (T words, lazy, SLM_PAD
 * layout, the tile's rounds done and synchronized) for the caller's epilogue. */
DECLSPEC LOCAL_AS u64 *fwd_cluster_tile(CONST_AS DWORD *src, u32 lift, lift_t lt, CONST_AS u64 *rw, CONST_AS u64 *rq,
                                        u64 q, u32 log_n, u32 log_m, u32 mode)
{
    LOCAL_ARRAY(u64, tile, SLM_WORDS);
    LOCAL_ARRAY(u64, scratch, XCHG_WORDS);
    const u32 T = XEHE_SLM_TILE;
    u32 rank = cluster_rank();
    u32 remote[XEHE_CLUSTER];
#pragma unroll
    for (u32 s = 0; s < XEHE_CLUSTER; s++) remote[s] = cluster_tile(tile, s);
#pragma unroll
    for (u32 cc = 0; cc < CLUSTER_COLS; cc++) {
        u32 j = CLUSTER_COL(rank, cc);
        u64 v[XEHE_CLUSTER];
#pragma unroll
        for (u32 s = 0; s < XEHE_CLUSTER; s++) v[s] = lift ? lift_word(lt, src[j + s * T], q) : src[j + s * T];
        fwd_round_r(v, LOG_CLUSTER, rw, rq, 1, 0, q);
#pragma unroll
        for (u32 s = 0; s < XEHE_CLUSTER; s++) cluster_st(remote[s] + 8 * SLM_PAD(j), v[s]);
    }
    cluster_sync();
    fwd_slm_rounds(tile, T, rw, rq, q, log_n, log_m, rank, mode, scratch);
    return tile;
}

DECLSPEC void fwd_cluster_row(GLOBAL_AS DWORD *dst, CONST_AS DWORD *src, u32 lift, lift_t lt, CONST_AS u64 *rw,
                              CONST_AS u64 *rq, u64 q, u32 log_n, u32 log_m, u32 mode)
{
    LOCAL_AS u64 *tile = fwd_cluster_tile(src, lift, lt, rw, rq, q, log_n, log_m, mode);
    dst += (u64)cluster_rank() * XEHE_SLM_TILE;
    for (u32 e = LOCAL_ID(); e < XEHE_SLM_TILE; e += LOCAL_SIZE()) dst[e] = fwd_final(tile[SLM_PAD(e)], q);
}

/*
 * The forward cluster NTT of row GROUP_ID() / C of `data`; its input row comes from `in` (the
 * same buffer for a plain NTT), or with lift_div != 0 from row LIFT_SRC_ROW of `in` through
 * lift_word.
 */
DECLSPEC void fwd_cluster(GLOBAL_AS DWORD *data, CONST_AS DWORD *in, u32 lift_div, CONST_AS u64 *r1, CONST_AS u64 *roots,
                          CONST_AS u64 *roots_q, CONST_AS u64 *moduli, u32 k, u32 log_n, u32 log_m, u32 mode,
                          u64 p_last, u64 p_last_r1)
{
    u32 row = GROUP_ID() / XEHE_CLUSTER, p = NTT_PRIME(row);
#ifdef XEHE_LIFT_SKIP_OWN
    /* Key switching's digit at its own prime is the target limb itself (ks_inner_u64 reads it
     * there): the whole cluster leaves that row alone. */
    if (lift_div && !p_last && LIFT_SRC_ROW(row, lift_div) == p) return;
#endif
    u64 q = moduli[p];
    CONST_AS DWORD *src = in + ((u64)(lift_div ? LIFT_SRC_ROW(row, lift_div) : row) << log_n);
    lift_t lt = lift_init(lift_div ? r1[p] : 0, q, p_last, p_last_r1);
    fwd_cluster_row(data + ((u64)row << log_n), src, lift_div, lt, roots + NTT_ROW(p), roots_q + NTT_ROW(p),
                    q, log_n, log_m, mode);
}

/* Same arguments as ntt_fwd_slm_u64 (log_m = c: the first round inside a tile). */
KERNEL_CLUSTER_FQ ntt_fwd_cluster_u64(GLOBAL_AS DWORD *data, CONST_AS u64 *roots, CONST_AS u64 *roots_q,
                                      CONST_AS u64 *moduli, u32 k, u32 log_n, u32 log_m, u32 mode)
{
    fwd_cluster(data, data, 0, moduli, roots, roots_q, moduli, k, log_n, log_m, mode, 0, 0);
}

/* ntt_fwd_radix8_lift_u64 as one cluster NTT: lifted[j][i] = NTT(t[j] mod p_i) (k = kp primes). */
KERNEL_CLUSTER_FQ ntt_fwd_cluster_lift_u64(GLOBAL_AS DWORD *lifted, CONST_AS DWORD *t, CONST_AS u64 *r1,
                                           CONST_AS u64 *roots, CONST_AS u64 *roots_q, CONST_AS u64 *moduli,
                                           u32 kp, u32 log_n, u32 log_m, u32 mode)
{
    fwd_cluster(lifted, t, kp, r1, roots, roots_q, moduli, kp, log_n, log_m, mode, 0, 0);
}

/*
 * Key switching's lift-NTT of one chunk of output primes, co-scheduled with the key inner
 * product of the previous chunk (the NTT is bound by the multiply pipe, the inner
 * product by DRAM, so one launch runs both on the same SMs). Clusters [0, inner_clusters) come
 * first in the grid (the block scheduler dispatches in order, so they stay resident next to the
 * NTT clusters) and stream the inner product of primes [p0, p0 + pw): prod[c][i][x] =
 * sum_j prev[j][i - p0][x] · key[j][c][kprime(i)][x] over kd digits (128-bit sums, one
 * reduction: mad_mod as ks_inner_u64; prod is 2 × kp rows). Every other cluster transforms one
 * row of the chunk of primes [i0, i0 + w): row rr (kd × w rows, digit-major) = NTT(t[rr / w]
 * mod p_{i0 + rr % w}) into lifted[rr]. w = 0 or pw = 0: that half is absent. (Skipping the
 * digit at its own prime here, as the separate launches do, was not kept: 349–353 µs per launch
 * at 2^16 in the one call that tried it, against 316–324 without in three others; H100.)
 */
KERNEL_CLUSTER_FQ ntt_fwd_cluster_lift_inner_u64(GLOBAL_AS DWORD *lifted, CONST_AS DWORD *t, CONST_AS u64 *r1,
                                                 CONST_AS u64 *roots, CONST_AS u64 *roots_q, CONST_AS u64 *moduli,
                                                 u32 kp, u32 log_n, u32 log_m, u32 mode, u32 i0, u32 w,
                                                 GLOBAL_AS DWORD *prod, CONST_AS DWORD *prev, CONST_AS DWORD *key,
                                                 CONST_AS u64 *r0, u32 kd, u32 key_k, u32 p0, u32 pw,
                                                 u32 inner_clusters)
{
    const u32 k = kp; /* the list's length, for NTT_ROW */
    u32 cl = GROUP_ID() / XEHE_CLUSTER;
    u64 n = (u64)1 << log_n;
    if (cl < inner_clusters) {
        u64 total = (u64)pw << log_n, plane = (u64)kp << log_n;
        u64 stride = (u64)inner_clusters * XEHE_CLUSTER * LOCAL_SIZE();
        for (u64 g = (u64)GROUP_ID() * LOCAL_SIZE() + LOCAL_ID(); g < total; g += stride) {
            u32 ii = (u32)(g >> log_n), i = p0 + ii;
            u32 ki = i + 1 == kp ? key_k - 1 : i;
            u64 x = g & (n - 1);
            u128_t a0 = {0, 0}, a1 = {0, 0};
#pragma unroll 4
            for (u32 j = 0; j < kd; j++) {
                u64 v = prev[(((u64)j * pw + ii) << log_n) + x];
                CONST_AS DWORD *k0 = key + (((u64)j * 2 * key_k + ki) << log_n) + x;
                a0 = mad64_wide(v, k0[0], a0);
                a1 = mad64_wide(v, k0[(u64)key_k << log_n], a1);
            }
            u64 q = moduli[i];
            prod[((u64)i << log_n) + x] = barrett_reduce_128(a0, q, r0[i], r1[i]);
            prod[plane + ((u64)i << log_n) + x] = barrett_reduce_128(a1, q, r0[i], r1[i]);
        }
        return;
    }
    u32 rr = cl - inner_clusters, i = i0 + rr % w;
    u64 q = moduli[i];
    fwd_cluster_row(lifted + ((u64)rr << log_n), t + ((u64)(rr / w) << log_n), 1, lift_init(r1[i], q, 0, 0),
                    roots + NTT_ROW(i), roots_q + NTT_ROW(i), q, log_n, log_m, mode);
}

/* ntt_fwd_radix8_moddown_u64 as one cluster NTT (the rounding correction of mod-down/rescale). */
KERNEL_CLUSTER_FQ ntt_fwd_cluster_moddown_u64(GLOBAL_AS DWORD *d, CONST_AS DWORD *last, CONST_AS u64 *r1,
                                              CONST_AS u64 *roots, CONST_AS u64 *roots_q, CONST_AS u64 *moduli,
                                              u32 k, u32 log_n, u32 log_m, u32 mode, u64 p_last, u64 p_last_r1)
{
    fwd_cluster(d, last, k, r1, roots, roots_q, moduli, k, log_n, log_m, mode, p_last, p_last_r1);
}

/*
 * The mod-down finish as a forward cluster NTT's epilogue: this CTA's part of a row (prime q) of
 * the transformed correction d lies in `tile`, and out[x] = c[x] + P^{-1} (xs[x] + q - d) mod q
 * is written instead (out, c, xs: that row; c = 0: nothing added; c may be out). Everything is
 * recomputed from the arguments after the NTT, so nothing extra stays live across it (its
 * register count sets the CTAs per SM).
 */
DECLSPEC void moddown_fin_epilogue(GLOBAL_AS DWORD *out, CONST_AS DWORD *c, CONST_AS DWORD *xs, LOCAL_AS u64 *tile, u64 q,
                                   u64 ip, u64 ipq)
{
    u64 w0 = (u64)cluster_rank() * XEHE_SLM_TILE;
    out += w0;
    xs += w0;
    c = c ? c + w0 : c;
    /* CLUSTER_FIN_BATCH words' loads at a time, then their words (a constant count: the loads
     * are in flight together, where a loop kept each behind the previous word's store, c being
     * possibly out: one DRAM latency a word). */
#pragma unroll
    for (u32 h = 0; h < XEHE_CLUSTER_ITEM; h += CLUSTER_FIN_BATCH) {
        u64 xv[CLUSTER_FIN_BATCH], cv[CLUSTER_FIN_BATCH];
#pragma unroll
        for (u32 t = 0; t < CLUSTER_FIN_BATCH; t++) {
            u32 e = LOCAL_ID() + (h + t) * CLUSTER_LOCAL;
            xv[t] = xs[e];
            cv[t] = c ? c[e] : 0;
        }
#pragma unroll
        for (u32 t = 0; t < CLUSTER_FIN_BATCH; t++) {
            u32 e = LOCAL_ID() + (h + t) * CLUSTER_LOCAL;
            u64 r = moddown_scaled_diff(xv[t], fwd_final(tile[SLM_PAD(e)], q), q, ip, ipq);
            out[e] = c ? add_mod(cv[t], r, q) : r;
        }
    }
}

/* moddown_fin_epilogue for row `row` = (c, i) (c = row / k) of out and c01 (k rows per
 * polynomial; c01 read as 0 from word c_words on) and row (c, i) of xs (x_rows_per_poly rows per
 * polynomial). */
DECLSPEC void moddown_fin_epilogue_rows(GLOBAL_AS DWORD *out, LOCAL_AS u64 *tile, u32 row, u32 k, CONST_AS u64 *moduli,
                                        u32 log_n, CONST_AS DWORD *c01, CONST_AS DWORD *xs, CONST_AS u64 *inv_p,
                                        CONST_AS u64 *inv_p_q, u32 x_rows_per_poly, u64 c_words)
{
    u32 c = row / k, i = row % k;
    u64 at = (u64)row << log_n;
    moddown_fin_epilogue(out + at, at < c_words ? c01 + at : 0, xs + (((u64)c * x_rows_per_poly + i) << log_n), tile,
                         moduli[i], inv_p[i], inv_p_q[i]);
}

/* The argument list of the mod-down finish kernels below (the host builds it once,
 * src/device/gpu/ntt.rs forward_moddown_finish; each kernel's comment says which it reads). */
#define MODDOWN_FIN_ARGS                                                                               \
    (GLOBAL_AS DWORD * out, CONST_AS DWORD * last, CONST_AS u64 * r1, CONST_AS u64 * roots, CONST_AS u64 * roots_q, \
     CONST_AS u64 * moduli, u32 k, u32 log_n, u32 log_m, u32 mode, u64 p_last, u64 p_last_r1,          \
     CONST_AS DWORD * c01, CONST_AS DWORD * xs, CONST_AS u64 * inv_p, CONST_AS u64 * inv_p_q,              \
     u32 x_rows_per_poly, u64 c_words)

/* This CTA's tile of the plain forward NTT of row `row` (prime i) of `last` (one canonical row
 * per (polynomial, prime)), for a finish epilogue. */
DECLSPEC LOCAL_AS u64 *fin_rows_tile(CONST_AS DWORD *last, u32 row, u32 i, CONST_AS u64 *roots, CONST_AS u64 *roots_q,
                                     CONST_AS u64 *moduli, u32 k, u32 log_n, u32 log_m, u32 mode)
{
    u64 q = moduli[i];
    return fwd_cluster_tile(last + ((u64)row << log_n), 0, lift_init(0, q, 0, 0), roots + NTT_ROW(i),
                            roots_q + NTT_ROW(i), q, log_n, log_m, mode);
}

/*
 * ntt_fwd_cluster_moddown_u64 with moddown_finish_u64 (keyswitch.cl) as its epilogue
 * (moddown_fin_epilogue): the correction of row (c, i) is `last`'s row c lifted as
 * lift_word does, transformed, and never written. Saves the finish launch and the write and read
 * of d (rescale at 2^16: 2 × 84 rows of 512 KiB).
 */
KERNEL_CLUSTER_FQ ntt_fwd_cluster_moddown_fin_u64 MODDOWN_FIN_ARGS
{
    u32 row = GROUP_ID() / XEHE_CLUSTER, i = row % k;
    u64 q = moduli[i];
    LOCAL_AS u64 *tile = fwd_cluster_tile(last + ((u64)(row / k) << log_n), 1, lift_init(r1[i], q, p_last, p_last_r1),
                                          roots + NTT_ROW(i), roots_q + NTT_ROW(i), q, log_n, log_m, mode);
    moddown_fin_epilogue_rows(out, tile, row, k, moduli, log_n, c01, xs, inv_p, inv_p_q, x_rows_per_poly, c_words);
}

/*
 * The same finish after the plain forward NTT of row `row` of `last` (polys × k rows, canonical,
 * coefficient form): hybrid ModDown, whose conversion output is already one row per prime
 * (src/device/gpu/hybrid.rs). r1, p_last and p_last_r1 are unused (the argument list is
 * ntt_fwd_cluster_moddown_fin_u64's).
 */
KERNEL_CLUSTER_FQ ntt_fwd_cluster_fin_u64 MODDOWN_FIN_ARGS
{
    u32 row = GROUP_ID() / XEHE_CLUSTER, i = row % k;
    LOCAL_AS u64 *tile = fin_rows_tile(last, row, i, roots, roots_q, moduli, k, log_n, log_m, mode);
    moddown_fin_epilogue_rows(out, tile, row, k, moduli, log_n, c01, xs, inv_p, inv_p_q, x_rows_per_poly, c_words);
}

/*
 * Hoisted rotations' ModDown finish as the batched NTT's epilogue (src/device/gpu/hybrid.rs
 * apply_galois_hybrid_many): row r of `last` (rotation h = r / rows_per_rot, rr = r % rows_per_rot
 * = c·k + i) is transformed as in ntt_fwd_cluster_fin_u64, and out_h[rr][x] = P^{-1} (xs[r][x] +
 * q_i − d) mod q_i, where xs holds every rotation's products (already permuted, c0 included:
 * ks_inner_hybrid_u64 with KS_ROTATE) and out_h is the device address c01[h] (CUDA only, as every
 * cluster kernel). The argument list is ntt_fwd_cluster_fin_u64's: out, r1, p_last, p_last_r1
 * and c_words are unused, c01 is the address table, x_rows_per_poly is rows_per_rot.
 */
KERNEL_CLUSTER_FQ ntt_fwd_cluster_fin_many_u64 MODDOWN_FIN_ARGS
{
    u32 row = GROUP_ID() / XEHE_CLUSTER, i = row % k;
    u64 q = moduli[i];
    LOCAL_AS u64 *tile = fin_rows_tile(last, row, i, roots, roots_q, moduli, k, log_n, log_m, mode);
    u32 h = row / x_rows_per_poly, rr = row % x_rows_per_poly;
    GLOBAL_AS DWORD *dst = (GLOBAL_AS DWORD *)((CONST_AS u64 *)c01)[h] + ((u64)rr << log_n);
    moddown_fin_epilogue(dst, 0, xs + ((u64)row << log_n), tile, q, inv_p[i], inv_p_q[i]);
}

/*
 * The inverse cluster NTT of row GROUP_ID() / C into row `row` of `data`, reading that row from
 * `src` (`data` itself in place). Output canonical.
 */
DECLSPEC void inv_cluster(GLOBAL_AS DWORD *data, CONST_AS DWORD *src, CONST_AS u64 *iroots, CONST_AS u64 *iroots_q,
                          CONST_AS u64 *moduli, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q, CONST_AS u64 *last_w,
                          CONST_AS u64 *last_wq, u32 k, u32 log_n, u32 stop_log_m, u32 mode)
{
    LOCAL_ARRAY(u64, tile, SLM_WORDS);
    LOCAL_ARRAY(u64, scratch, XCHG_WORDS);
    const u32 T = XEHE_SLM_TILE;
    u32 n = 1u << log_n;
    u32 rank = cluster_rank(), row = GROUP_ID() / XEHE_CLUSTER, p = NTT_PRIME(row);
    u64 q = moduli[p];
    CONST_AS u64 *rw = iroots + NTT_ROW(p);
    CONST_AS u64 *rq = iroots_q + NTT_ROW(p);
    inv_last_t il = inv_last(inv_n, inv_n_q, last_w, last_wq, p);
    GLOBAL_AS DWORD *dst = data + ((u64)row << log_n);
    CONST_AS DWORD *own = src + (u64)rank * T;
    /* A constant count (LOCAL_SIZE() = CLUSTER_LOCAL): the loads are in flight together. */
#pragma unroll
    for (u32 t = 0; t < XEHE_CLUSTER_ITEM; t++) {
        u32 e = LOCAL_ID() + t * CLUSTER_LOCAL;
        tile[SLM_PAD(e)] = own[e];
    }
    SYNC_THREADS();
    inv_slm_rounds(tile, T, rw, rq, q, log_n, n, stop_log_m, rank, mode, 1, il, scratch);
    cluster_sync();
    u32 remote[XEHE_CLUSTER];
#pragma unroll
    for (u32 s = 0; s < XEHE_CLUSTER; s++) remote[s] = cluster_tile(tile, s);
#pragma unroll
    for (u32 cc = 0; cc < CLUSTER_COLS; cc++) {
        u32 j = CLUSTER_COL(rank, cc);
        u64 v[XEHE_CLUSTER];
#pragma unroll
        for (u32 s = 0; s < XEHE_CLUSTER; s++) v[s] = cluster_ld(remote[s] + 8 * SLM_PAD(j));
        inv_round_r(v, LOG_CLUSTER, rw, rq, n, XEHE_CLUSTER >> 1, 0, q, 1, il.in, il.inq, il.lw, il.lwq);
#pragma unroll
        for (u32 s = 0; s < XEHE_CLUSTER; s++) dst[j + s * T] = v[s];
    }
    /* No CTA may exit (freeing its shared memory) while another still reads its tile. */
    cluster_sync();
}

/* Same arguments as ntt_inv_slm_u64 (stop_log_m = c); output canonical. */
KERNEL_CLUSTER_INV_FQ ntt_inv_cluster_u64(GLOBAL_AS DWORD *data, CONST_AS u64 *iroots, CONST_AS u64 *iroots_q,
                                      CONST_AS u64 *moduli, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q,
                                      CONST_AS u64 *last_w, CONST_AS u64 *last_wq, u32 k, u32 log_n,
                                      u32 stop_log_m, u32 mode)
{
    inv_cluster(data, data + ((u64)(GROUP_ID() / XEHE_CLUSTER) << log_n), iroots, iroots_q, moduli, inv_n, inv_n_q,
                last_w, last_wq, k, log_n, stop_log_m, mode);
}

/*
 * ntt_inv_cluster_u64 out of place from a strided source: row r of `data` = INTT of row
 * r · src_stride + src_row of `in` (rescale's and mod-down's last limb of every polynomial,
 * read where it lies instead of gathered first; `in` is left unchanged).
 */
KERNEL_CLUSTER_INV_FQ ntt_inv_cluster_from_u64(GLOBAL_AS DWORD *data, CONST_AS u64 *iroots, CONST_AS u64 *iroots_q,
                                           CONST_AS u64 *moduli, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q,
                                           CONST_AS u64 *last_w, CONST_AS u64 *last_wq, u32 k, u32 log_n,
                                           u32 stop_log_m, u32 mode, CONST_AS DWORD *in, u32 src_stride, u32 src_row)
{
    u64 r = (u64)(GROUP_ID() / XEHE_CLUSTER) * src_stride + src_row;
    inv_cluster(data, in + (r << log_n), iroots, iroots_q, moduli, inv_n, inv_n_q, last_w, last_wq, k, log_n,
                stop_log_m, mode);
}
#endif /* XEHE_CLUSTER on sm_90+ */

/* ------- 2D / four-step (Shivdikar et al. §V-A3's 2D NTT, with the twist it omits) ------- */

/*
 * N = N1 × N2 (log_n1 = log2 N1, N2 = XEHE_SLM_TILE), data viewed row-major as N1 rows × N2
 * columns (word n1·N2 + n2). Forward: (1) N1-point negacyclic NTTs of the N2 columns
 * (ntt_fwd_cols_u64); (2) word (r, n2) times γ_r^{n2}, γ_r = ψ^{2·brv(r)+1−N1} — the inter-phase
 * twiddles and the negacyclic twist in one factor (tables twist/twist_q, k × N); (3) N2-point
 * negacyclic NTTs of the rows with root ψ^{N1} (ntt_fwd_rows_u64). Both sub-transforms read
 * SEAL's N-point tables: their first N1 (N2) forward entries, and the inverse entries from
 * N − 2m + 1 on, are the tables of the smaller transforms. The result is in SEAL's bit-reversed
 * order as it lies, no transposition. The inverse runs the mirror image with N^{-1} folded into
 * the last column round.
 *
 * Column kernels: one work-group per row and chunk of C = N2 / N1 adjacent columns (coalesced),
 * kept column after column in shared memory.
 */
DECLSPEC void fs_columns(GLOBAL_AS DWORD *src, LOCAL_AS u64 *tile, u32 log_n, u32 log_n1, u32 load, u64 q)
{
    const u32 T = XEHE_SLM_TILE;
    u32 log_c = log_n - 2 * log_n1; /* log2 C */
    for (u32 e = LOCAL_ID(); e < T; e += LOCAL_SIZE()) {
        u32 c = e & ((1u << log_c) - 1), r = e >> log_c;
        u32 s = SLM_PAD((c << log_n1) + r);
        u32 g = (r << (log_n - log_n1)) + c;
        if (load)
            tile[s] = src[g];
        else
            src[g] = fwd_store(tile[s], q); /* a forward column's lazy output; < 4q inverse ones */
    }
}

KERNEL_FQ void ntt_fwd_cols_u64(GLOBAL_AS DWORD *data, CONST_AS u64 *roots, CONST_AS u64 *roots_q,
                                CONST_AS u64 *moduli, CONST_AS u64 *twist, CONST_AS u64 *twist_q, u32 k, u32 log_n,
                                u32 log_n1, u32 mode)
{
    (void)twist;
    (void)twist_q;
    LOCAL_ARRAY(u64, tile, SLM_WORDS);
    LOCAL_ARRAY(u64, scratch, XCHG_WORDS);
    const u32 T = XEHE_SLM_TILE;
    u32 row = GROUP_ID() >> log_n1;
    u32 chunk = GROUP_ID() & ((1u << log_n1) - 1);
    u32 p = NTT_PRIME(row);
    GLOBAL_AS DWORD *src = data + ((u64)row << log_n) + ((u64)chunk << (log_n - 2 * log_n1));
    fs_columns(src, tile, log_n, log_n1, 1, 0);
    SYNC_THREADS();
    fwd_slm_rounds(tile, T, roots + NTT_ROW(p), roots_q + NTT_ROW(p), moduli[p], log_n1, 0, 0, mode,
                   scratch);
    fs_columns(src, tile, log_n, log_n1, 0, moduli[p]);
}

KERNEL_FQ void ntt_fwd_rows_u64(GLOBAL_AS DWORD *data, CONST_AS u64 *roots, CONST_AS u64 *roots_q,
                                CONST_AS u64 *moduli, CONST_AS u64 *twist, CONST_AS u64 *twist_q, u32 k, u32 log_n,
                                u32 log_n1, u32 mode)
{
    LOCAL_ARRAY(u64, tile, SLM_WORDS);
    LOCAL_ARRAY(u64, scratch, XCHG_WORDS);
    const u32 T = XEHE_SLM_TILE;
    u32 row = GROUP_ID() >> log_n1;
    u32 r = GROUP_ID() & ((1u << log_n1) - 1);
    u32 p = NTT_PRIME(row);
    u64 q = moduli[p];
    u64 off = ((u64)row << log_n) + (u64)r * T;
    u64 toff = NTT_ROW(p) + (u64)r * T;
    for (u32 e = LOCAL_ID(); e < T; e += LOCAL_SIZE())
        tile[SLM_PAD(e)] = mul_shoup_lazy(data[off + e], twist[toff + e], twist_q[toff + e], q);
    SYNC_THREADS();
    fwd_slm_rounds(tile, T, roots + NTT_ROW(p), roots_q + NTT_ROW(p), q, log_n - log_n1, 0, 0, mode,
                   scratch);
    for (u32 e = LOCAL_ID(); e < T; e += LOCAL_SIZE()) data[off + e] = fwd_final(tile[SLM_PAD(e)], q);
}

KERNEL_FQ void ntt_inv_rows_u64(GLOBAL_AS DWORD *data, CONST_AS u64 *iroots, CONST_AS u64 *iroots_q,
                                CONST_AS u64 *moduli, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q,
                                CONST_AS u64 *last_w, CONST_AS u64 *last_wq, CONST_AS u64 *itwist,
                                CONST_AS u64 *itwist_q, u32 k, u32 log_n, u32 log_n1, u32 mode)
{
    LOCAL_ARRAY(u64, tile, SLM_WORDS);
    LOCAL_ARRAY(u64, scratch, XCHG_WORDS);
    const u32 T = XEHE_SLM_TILE;
    u32 row = GROUP_ID() >> log_n1;
    u32 r = GROUP_ID() & ((1u << log_n1) - 1);
    u32 p = NTT_PRIME(row);
    u64 q = moduli[p];
    u64 off = ((u64)row << log_n) + (u64)r * T;
    u64 toff = NTT_ROW(p) + (u64)r * T;
    for (u32 e = LOCAL_ID(); e < T; e += LOCAL_SIZE()) tile[SLM_PAD(e)] = data[off + e];
    SYNC_THREADS();
    inv_slm_rounds(tile, T, iroots + NTT_ROW(p), iroots_q + NTT_ROW(p), q, log_n - log_n1,
                   1u << log_n, 0, 0, mode, 0, inv_last(inv_n, inv_n_q, last_w, last_wq, p), scratch);
    for (u32 e = LOCAL_ID(); e < T; e += LOCAL_SIZE())
        data[off + e] = mul_shoup_lazy(tile[SLM_PAD(e)], itwist[toff + e], itwist_q[toff + e], q);
}

KERNEL_FQ void ntt_inv_cols_u64(GLOBAL_AS DWORD *data, CONST_AS u64 *iroots, CONST_AS u64 *iroots_q,
                                CONST_AS u64 *moduli, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q,
                                CONST_AS u64 *last_w, CONST_AS u64 *last_wq, CONST_AS u64 *itwist,
                                CONST_AS u64 *itwist_q, u32 k, u32 log_n, u32 log_n1, u32 mode)
{
    LOCAL_ARRAY(u64, tile, SLM_WORDS);
    LOCAL_ARRAY(u64, scratch, XCHG_WORDS);
    const u32 T = XEHE_SLM_TILE;
    u32 row = GROUP_ID() >> log_n1;
    u32 chunk = GROUP_ID() & ((1u << log_n1) - 1);
    u32 p = NTT_PRIME(row);
    GLOBAL_AS DWORD *src = data + ((u64)row << log_n) + ((u64)chunk << (log_n - 2 * log_n1));
    (void)itwist;
    (void)itwist_q;
    fs_columns(src, tile, log_n, log_n1, 1, 0);
    SYNC_THREADS();
    inv_slm_rounds(tile, T, iroots + NTT_ROW(p), iroots_q + NTT_ROW(p), moduli[p], log_n1, 1u << log_n,
                   0, 0, mode, 1, inv_last(inv_n, inv_n_q, last_w, last_wq, p), scratch);
    fs_columns(src, tile, log_n, log_n1, 0, moduli[p]);
}

/* ---------------- polynomial multiplication, NTT fused with the Hadamard product ---------------- */

/*
 * Shivdikar et al.'s Algorithm 8 (§III-B) with the truncations corrected (the truncated
 * Gentleman–Sande transform drops the first round, not the last as the paper's text says): the
 * forward NTTs of a and b stop before their last Cooley–Tukey round; that round, the pointwise
 * product and the first Gentleman–Sande round fold into one step per pair (x, y) with twiddle w:
 *   U = 2(x_a·x_b + (w·y_a)(w·y_b)),  V = 2(x_a·y_b + y_a·x_b)  (mod q),
 * each a sum of two 128-bit products with one Barrett reduction (mad_mod, §V-A1) — four
 * products and two Shoup multiplications instead of the five products of NTT, Hadamard and
 * iNTT rounds. The remaining inverse rounds run from N/4 blocks down as usual.
 *
 * ntt_polymul_slm_u64: one work-group per tile of XEHE_SLM_TILE words of row `row` of c, a, b:
 * the forward rounds from 2^log_m blocks of a's and b's tiles (their global rounds done), the
 * fused step, then the inverse rounds down to 2^log_m blocks, written to c. r0/r1: the primes'
 * Barrett constants floor(2^128 / q). When log_m == 0 this is the whole product in one launch.
 */
/* Two tiles and the exchange area live in static shared memory, of which CUDA allows 48 KiB:
 * the kernel exists only where they fit (the polymul plan caps its tile; this file is also
 * compiled with larger tiles for the other kernels, which would otherwise fail to build). */
#if !defined(IS_CUDA) || (2 * SLM_WORDS + XCHG_WORDS) * 8 <= 49152
KERNEL_FQ void ntt_polymul_slm_u64(GLOBAL_AS DWORD *c, CONST_AS DWORD *a, CONST_AS DWORD *b, CONST_AS u64 *roots,
                                   CONST_AS u64 *roots_q, CONST_AS u64 *iroots, CONST_AS u64 *iroots_q,
                                   CONST_AS u64 *moduli, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q,
                                   CONST_AS u64 *last_w, CONST_AS u64 *last_wq, CONST_AS u64 *r0s, CONST_AS u64 *r1s,
                                   u32 k, u32 log_n, u32 log_m, u32 mode)
{
    LOCAL_ARRAY(u64, ta, SLM_WORDS);
    LOCAL_ARRAY(u64, tb, SLM_WORDS);
    LOCAL_ARRAY(u64, scratch, XCHG_WORDS);
    const u32 T = XEHE_SLM_TILE;
    u32 n = 1u << log_n;
    u32 tiles_per_row = n / T;
    u32 row = GROUP_ID() / tiles_per_row;
    u32 tin = GROUP_ID() % tiles_per_row;
    u32 p = NTT_PRIME(row);
    u64 q = moduli[p];
    u64 off = ((u64)row << log_n) + (u64)tin * T;
    CONST_AS u64 *rw = roots + NTT_ROW(p);
    CONST_AS u64 *rq = roots_q + NTT_ROW(p);
    for (u32 e = LOCAL_ID(); e < T; e += LOCAL_SIZE()) {
        ta[SLM_PAD(e)] = a[off + e];
        tb[SLM_PAD(e)] = b[off + e];
    }
    SYNC_THREADS();
    fwd_slm_rounds_to(ta, T, rw, rq, q, log_n, log_m, log_n - 1, tin, mode, scratch);
    fwd_slm_rounds_to(tb, T, rw, rq, q, log_n, log_m, log_n - 1, tin, mode, scratch);
    u64 r0 = r0s[p], r1 = r1s[p];
    for (u32 j = LOCAL_ID(); j < T / 2; j += LOCAL_SIZE()) {
        u32 i = tin * (T / 2) + j;
        u64 w = rw[n / 2 + i], wq = rq[n / 2 + i];
        u64 xa = fwd_final(ta[SLM_PAD(2 * j)], q), ya = fwd_final(ta[SLM_PAD(2 * j + 1)], q);
        u64 xb = fwd_final(tb[SLM_PAD(2 * j)], q), yb = fwd_final(tb[SLM_PAD(2 * j + 1)], q);
        u64 wya = mul_shoup(ya, w, wq, q), wyb = mul_shoup(yb, w, wq, q);
        u64 u = barrett_reduce_128(mad64_wide(wya, wyb, mul64_wide(xa, xb)), q, r0, r1);
        u64 v = barrett_reduce_128(mad64_wide(ya, xb, mul64_wide(xa, yb)), q, r0, r1);
        ta[SLM_PAD(2 * j)] = add_mod(u, u, q);
        ta[SLM_PAD(2 * j + 1)] = add_mod(v, v, q);
    }
    SYNC_THREADS();
    inv_slm_rounds_from(ta, T, iroots + NTT_ROW(p), iroots_q + NTT_ROW(p), q, log_n, n, log_n - 1,
                        log_m, tin, mode, 1, inv_last(inv_n, inv_n_q, last_w, last_wq, p), scratch);
    for (u32 e = LOCAL_ID(); e < T; e += LOCAL_SIZE()) c[off + e] = ta[SLM_PAD(e)];
}
#endif
