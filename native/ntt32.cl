/*
 * ntt32.cl — the negacyclic NTT on 32-bit residues: primes below 2^30, one u32 word per
 * coefficient. The same transforms as ntt.cl's (SEAL's ntt_negacyclic_harvey and its inverse:
 * natural order in, bit-reversed out, the tables of src/math/ntt.rs), so the words equal the
 * CPU NTT's for every such prime; only the word differs.
 *
 * Why q < 2^30: the forward butterflies keep values below 4q (Harvey's lazy reduction), which
 * must fit the 32-bit word. Products use Shoup's method with 32-bit quotients
 * (floor(w * 2^32 / q)): one 32x32 low and two 32x32 high products, where 64-bit words need a
 * 64x64 high product (emulated by several 32-bit multiply-adds on GPUs).
 *
 * Plan (src/device/ntt_family/word32.rs): forward, global radix-2^lr passes of up to 4 rounds
 * (registers) until a butterfly's block fits a tile of TILE32 words, then one shared-memory
 * kernel for the remaining rounds and the final reduction; the inverse mirrors it (the tile's
 * rounds first, then global passes, the last with N^{-1} folded into its last round).
 * Row r of `data` uses prime (r / XEHE_ROWS_PER_PRIME) % k: 1 (default) for rows in
 * [instance][limb][N] order, B for B instances stored limb-major (as ntt.cl).
 *
 * Tables (src/device/ntt_tables.rs): the 32-bit Shoup quotients floor(w * 2^32 / q) of the roots
 * w (the high halves of the 64-bit NTT's quotients), dense, one u32 word a root (RootsQ32,
 * InvRootsQ32: the inverse's shifted down by one), in the argument slot where the 64-bit kernels
 * take the roots; the root itself follows from its quotient (root_m1_32), so the butterflies
 * read one table. A thread's twiddles of one round are a run of consecutive words, aligned, which
 * it reads with vector loads (quots32): in the late rounds every butterfly has its own twiddle,
 * and scalar loads from the 64-bit table made a cache transaction of each.
 */
#include "modarith.h"
#include "cluster.h"
#include "ntt_rows.h"

#ifndef TILE32
#define TILE32 4096
#endif
/* Shared-memory padding: one spare word after every 16, so that the late tile steps' strided
 * accesses (a work-item's 16 words side by side) spread over the banks. */
#define PAD32(i) ((i) + ((i) >> 4))
#define TILE32_WORDS (TILE32 + TILE32 / 16)
/* PAD32(at + (i << log_s)) - PAD32(at): word i of a group at stride 2^log_s from `at`, as a
 * multiple of i where the padding allows (log_s >= 4: each stride adds 2^(log_s - 4) pad words;
 * log_s + lr = 4: the group's 2^lr words lie within 16, from a multiple of 16), so that with
 * compile-time steps (the cluster kernels) each access is one address plus a constant. */
DECLSPEC u32 pad_off32(u32 at, u32 i, u32 log_s, u32 lr)
{
    if (log_s >= 4) return i * ((1u << log_s) + (1u << (log_s - 4)));
    if (log_s + lr == 4) return i << log_s;
    return PAD32(at + (i << log_s)) - PAD32(at);
}
#ifndef XEHE_ROWS_PER_PRIME
#define XEHE_ROWS_PER_PRIME 1
#endif
#define NTT32_PRIME(row) (((row) / XEHE_ROWS_PER_PRIME) % k)

/* The tile's steps: unrolled where their count is a compile-time constant (the cluster kernels,
 * CUDA); OpenCL compilers warn on a loop they cannot unroll. */
#if IS_CUDA
#define UNROLL_STEPS _Pragma("unroll")
#else
#define UNROLL_STEPS
#endif

/* Words each work-item of the shared-memory kernel holds: radix 16. */
#define R32 16

/* Word i of a 64-bit per-prime table (N^{-1}, the last inverse root) as a 32-bit operand, and
 * of its quotient table as the 32-bit quotient (the high word). */
#define ROOT32(rw, i) ((u32)(rw)[i])
#define QUOT32(rq, i) (((CONST_AS u32 *)(rq))[2 * (i) + 1])

/*
 * The butterflies read only the quotient table (its high words): half the bytes of a root and its
 * quotient, and the tables, not the data, are most of an NTT's traffic (about N twiddles a row
 * against N words). The root follows from its quotient wq = floor(w * 2^32 / q) with one high
 * product: for 0 < w < q < 2^30 (q odd), w * 2^32 = wq * q + r with 0 < r < q, so
 * hi(wq * q) = w - 1 (roots are powers of a primitive root, never 0). root_m1_32 gives w - 1, and
 * shoup32_m1 takes x * w as x * (w - 1) + x: one multiply-add, as x * w would be.
 */
DECLSPEC u32 root_m1_32(u32 wq, u32 q)
{
    return mulhi32(wq, q);
}

/* A prime's constants for the butterflies, each in its own register (opaque32). */
typedef struct {
    u32 q, two_q, nq;
} prime32_t;

DECLSPEC prime32_t prime32(u32 q)
{
    prime32_t m;
    m.q = q;
    m.two_q = opaque32(2 * q);
    m.nq = opaque32(0u - q);
    return m;
}

/* Shoup's x * w mod q in [0, 2q) from w - 1 (root_m1_32) and wq. */
DECLSPEC u32 shoup32_m1(u32 x, u32 wm1, u32 wq, prime32_t m)
{
    return x * wm1 + x + mulhi32(x, wq) * m.nq;
}

/* x - m where x >= m, else x (any x, 0 < m < 2^32): where x < m the difference wraps above x. */
DECLSPEC u32 csub32(u32 x, u32 m)
{
    u32 d = x - m;
    return d < x ? d : x; /* min(x, x - m): one instruction */
}

/* The `count` (1, 2 or a multiple of 4) consecutive 32-bit quotients rq[at ...], `at` a multiple
 * of min(count, 4) and rq 16-byte aligned: one vector load per four. */
DECLSPEC_INLINE void quots32(CONST_AS u32 *rq, u32 at, const u32 count, u32 *out)
{
    if (count == 1) {
        out[0] = rq[at];
    } else if (count == 2) {
#if IS_CUDA
        uint2 v = *(const uint2 *)(rq + at);
#else
        uint2 v = vload2(0, rq + at);
#endif
        out[0] = v.x;
        out[1] = v.y;
    } else {
#pragma unroll
        for (u32 c = 0; c < count; c += 4) {
#if IS_CUDA
            uint4 v = *(const uint4 *)(rq + at + c);
#else
            uint4 v = vload4(0, rq + at + c);
#endif
            out[c] = v.x;
            out[c + 1] = v.y;
            out[c + 2] = v.z;
            out[c + 3] = v.w;
        }
    }
}

/* The inverse's last round of one prime: N^{-1} and N^{-1} * w (w its last inverse root) with
 * their 32-bit quotients; `on` = 0 where the rounds at hand do not end the transform. */
typedef struct {
    u32 in, inq, lw, lwq, on;
} last32_t;

DECLSPEC last32_t last32(u32 on, u32 p, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q, CONST_AS u64 *last_w,
                         CONST_AS u64 *last_wq)
{
    last32_t l;
    l.on = on;
    l.in = on ? ROOT32(inv_n, p) : 0;
    l.inq = on ? QUOT32(inv_n_q, p) : 0;
    l.lw = on ? ROOT32(last_w, p) : 0;
    l.lwq = on ? QUOT32(last_wq, p) : 0;
    return l;
}

/* Forward (Cooley–Tukey) butterfly, inputs and outputs below 4q; wm1 = w - 1 (root_m1_32). */
DECLSPEC void fwd_bf32(u32 *x, u32 *y, u32 wm1, u32 wq, prime32_t m)
{
    u32 u = csub32(*x, m.two_q);
    u32 v = shoup32_m1(*y, wm1, wq, m);
    *x = u + v;
    *y = u + m.two_q - v;
}

/* Inverse (Gentleman–Sande) butterfly, inputs and outputs below 2q; wm1 = w - 1. */
DECLSPEC void inv_bf32(u32 *x, u32 *y, u32 wm1, u32 wq, prime32_t m)
{
    u32 u = *x, v = *y;
    *x = csub32(u + v, m.two_q);
    *y = shoup32_m1(u + m.two_q - v, wm1, wq, m);
}

/* The inverse's last round with N^{-1} folded in, canonical outputs. */
DECLSPEC void inv_bf32_last(u32 *x, u32 *y, last32_t last, prime32_t m)
{
    u32 u = *x, v = *y;
    u32 s = csub32(u + v, m.two_q);
    u32 a = shoup32_lazy(s, last.in, last.inq, m.q);
    u32 b = shoup32_lazy(u + m.two_q - v, last.lw, last.lwq, m.q);
    *x = csub32(a, m.q);
    *y = csub32(b, m.q);
}

DECLSPEC u32 reduce4q(u32 x, u32 q)
{
    return csub32(csub32(x, 2 * q), q);
}

/*
 * lr forward rounds on v[0 .. 2^lr), the words of one group: v[k] at stride S inside global
 * block b of the round with 2^log_m blocks. Round r's butterflies pair k and k + 2^(lr-r-1)
 * and take the root of block (b << r) + (k >> (lr - r)) of the round with 2^(log_m + r)
 * blocks (SEAL's root_powers index: blocks + block).
 */
DECLSPEC_INLINE void fwd_rounds32(u32 *v, const u32 lr, u32 log_m, u32 b, CONST_AS u32 *rq, u32 q)
{
    prime32_t pm = prime32(q);
#pragma unroll
    for (u32 r = 0; r < lr; r++) {
        const u32 hw = 1u << (lr - r - 1);
        /* Round r's twiddles: the 2^r from (1 << (log_m + r)) + (b << r), one per block. */
        u32 wq[R32 / 2];
        quots32(rq, (1u << (log_m + r)) + (b << r), 1u << r, wq);
#pragma unroll
        for (u32 k = 0; k < (1u << lr); k++) {
            if ((k & hw) == 0) {
                u32 t = wq[k >> (lr - r)];
                fwd_bf32(&v[k], &v[k + hw], root_m1_32(t, q), t, pm);
            }
        }
    }
}

/*
 * lr inverse rounds on v[0 .. 2^lr): v[k] at stride S = 2^log_s (the first round's gap) inside
 * global block bb of size 2^lr * S. Round r pairs k and k + 2^r with gap t = S << r, in the
 * round with m = N / (2t) blocks, and takes inverse root N - 2m + 1 + block (the CPU's
 * sequential index), block = bb * 2^(lr-r-1) + (k >> (r + 1)). `last.on`: the final round
 * (m = 1) is this call's last, done by inv_bf32_last (canonical outputs).
 */
DECLSPEC_INLINE void inv_rounds32(u32 *v, const u32 lr, u32 log_n, u32 log_s, u32 bb, CONST_AS u32 *rq,
                                  last32_t last, u32 q)
{
    prime32_t pm = prime32(q);
#pragma unroll
    for (u32 r = 0; r < lr; r++) {
        const u32 hw = 1u << r;
        u32 log_m = log_n - 1 - (log_s + r);
        /* Round r's 2^(lr - r - 1) twiddles from first + bb * 2^(lr - r - 1), read from the table
         * shifted by one (word i is root i + 1's): first - 1 = N - 2m keeps the run aligned. */
        u32 wq[R32 / 2];
        if (!(last.on && log_m == 0)) {
            quots32(rq, (1u << log_n) - (2u << log_m) + bb * (1u << (lr - r - 1)), 1u << (lr - r - 1), wq);
        }
#pragma unroll
        for (u32 k = 0; k < (1u << lr); k++) {
            if ((k & hw) == 0) {
                if (last.on && log_m == 0) {
                    inv_bf32_last(&v[k], &v[k + hw], last, pm);
                } else {
                    u32 t = wq[k >> (r + 1)];
                    inv_bf32(&v[k], &v[k + hw], root_m1_32(t, q), t, pm);
                }
            }
        }
    }
}

/* A global pass's work-item (one per group of 2^LR words): its row, its group in the row (rem),
 * the row's prime. Returns past the last group. */
#define PASS_ITEM(LR)                                                                                  \
    u64 g = GLOBAL_ID();                                                                               \
    u32 log_groups = log_n - (LR);                                                                     \
    if (g >= ((u64)rows << log_groups)) return;                                                        \
    u32 row = (u32)(g >> log_groups), rem = (u32)(g & ((1u << log_groups) - 1));                       \
    u32 p = NTT32_PRIME(row), q = (u32)moduli[p];

/* Forward global pass of LR rounds from 2^log_m blocks. */
#define NTT32_FWD_PASS(LR)                                                                               \
    KERNEL_FQ void ntt32_fwd_pass##LR##_u32(GLOBAL_AS u32 *data, CONST_AS u32 *rq32, CONST_AS u64 *roots_q, \
                                              CONST_AS u64 *moduli, u32 k, u32 log_n, u32 log_m, u32 rows)   \
    {                                                                                                    \
        PASS_ITEM(LR)                                                                                    \
        u32 log_s = log_n - log_m - LR;                                                                  \
        u32 b = rem >> log_s, o = rem & ((1u << log_s) - 1);                                             \
        GLOBAL_AS u32 *x = data + ((u64)row << log_n) + ((u64)b << (log_n - log_m)) + o;                 \
        u32 v[1 << LR];                                                                                  \
        _Pragma("unroll") for (u32 i = 0; i < (1u << LR); i++) v[i] = x[i << log_s];                     \
        fwd_rounds32(v, LR, log_m, b, rq32 + NTT_ROW(p), q);                                  \
        _Pragma("unroll") for (u32 i = 0; i < (1u << LR); i++) x[i << log_s] = v[i];                     \
    }

NTT32_FWD_PASS(1)
NTT32_FWD_PASS(2)
NTT32_FWD_PASS(3)
NTT32_FWD_PASS(4)

/* Inverse global pass of LR rounds from gap 2^log_s; `last` (0 or 1): it ends the transform. */
#define NTT32_INV_PASS(LR)                                                                                 \
    KERNEL_FQ void ntt32_inv_pass##LR##_u32(GLOBAL_AS u32 *data, CONST_AS u32 *irq32, CONST_AS u64 *iroots_q, \
                                              CONST_AS u64 *moduli, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q, \
                                              CONST_AS u64 *last_w, CONST_AS u64 *last_wq, u32 k, u32 log_n,   \
                                              u32 log_s, u32 rows, u32 last)                                   \
    {                                                                                                      \
        PASS_ITEM(LR)                                                                                      \
        u32 bb = rem >> log_s, o = rem & ((1u << log_s) - 1);                                              \
        GLOBAL_AS u32 *x = data + ((u64)row << log_n) + ((u64)bb << (log_s + LR)) + o;                     \
        u32 v[1 << LR];                                                                                    \
        _Pragma("unroll") for (u32 i = 0; i < (1u << LR); i++) v[i] = x[i << log_s];                       \
        inv_rounds32(v, LR, log_n, log_s, bb, irq32 + NTT_ROW(p),                                \
                     last32(last, p, inv_n, inv_n_q, last_w, last_wq), q);                                  \
        _Pragma("unroll") for (u32 i = 0; i < (1u << LR); i++) x[i << log_s] = v[i];                       \
    }

NTT32_INV_PASS(1)
NTT32_INV_PASS(2)
NTT32_INV_PASS(3)
NTT32_INV_PASS(4)

/* One step of lr forward rounds on the tile (2^log_t words, global block b of 2^log_m), from
 * local round r0: each work-item's groups of 2^lr words at stride 2^(log_t - r0 - lr). */
DECLSPEC_INLINE void fwd_tile_step32(LOCAL_AS u32 *tile, const u32 lr, u32 log_t, u32 r0, u32 log_m, u32 b,
                                     CONST_AS u32 *rq, u32 q)
{
    u32 log_s = log_t - r0 - lr;
    for (u32 g = LOCAL_ID(); g < (1u << (log_t - lr)); g += LOCAL_SIZE()) {
        u32 lb = g >> log_s, o = g & ((1u << log_s) - 1);
        u32 at = (lb << (log_t - r0)) + o;
        LOCAL_AS u32 *grp = tile + PAD32(at);
        u32 v[R32];
#pragma unroll
        for (u32 i = 0; i < (1u << lr); i++) v[i] = grp[pad_off32(at, i, log_s, lr)];
        fwd_rounds32(v, lr, log_m + r0, (b << r0) + lb, rq, q);
#pragma unroll
        for (u32 i = 0; i < (1u << lr); i++) grp[pad_off32(at, i, log_s, lr)] = v[i];
    }
    SYNC_THREADS();
}

/* The inverse counterpart from local gap 2^s0 (global gap too: the tile's rounds come first). */
DECLSPEC_INLINE void inv_tile_step32(LOCAL_AS u32 *tile, const u32 lr, u32 log_t, u32 s0, u32 log_n, u32 b,
                                     CONST_AS u32 *rq, last32_t last, u32 q)
{
    for (u32 g = LOCAL_ID(); g < (1u << (log_t - lr)); g += LOCAL_SIZE()) {
        u32 lb = g >> s0, o = g & ((1u << s0) - 1);
        u32 at = (lb << (s0 + lr)) + o;
        LOCAL_AS u32 *grp = tile + PAD32(at);
        u32 v[R32];
#pragma unroll
        for (u32 i = 0; i < (1u << lr); i++) v[i] = grp[pad_off32(at, i, s0, lr)];
        inv_rounds32(v, lr, log_n, s0, (b << (log_t - s0 - lr)) + lb, rq, last, q);
#pragma unroll
        for (u32 i = 0; i < (1u << lr); i++) grp[pad_off32(at, i, s0, lr)] = v[i];
    }
    SYNC_THREADS();
}

#define STEP_CASES(rounds, STEP) \
    switch (rounds) {            \
    case 1: STEP(1); break;      \
    case 2: STEP(2); break;      \
    case 3: STEP(3); break;      \
    default: STEP(4); break;     \
    }

/* The forward rounds of a tile of 2^log_t words (global block b of 2^log_m blocks, loaded at
 * PAD32 positions) in steps of up to 4 rounds, as even as they come (13 rounds: 4, 3, 3, 3).
 * Inlined: pocl needs a work-group barrier in the kernel's own code, not in a called function. */
DECLSPEC_INLINE void fwd_tile_rounds32(LOCAL_AS u32 *tile, u32 log_t, u32 log_m, u32 b, CONST_AS u32 *rq,
                                       u32 q)
{
    u32 steps = (log_t + 3) / 4, r0 = 0;
    UNROLL_STEPS
    for (u32 st = 0; st < steps; st++) {
        u32 lr = log_t / steps + (st < log_t % steps ? 1 : 0);
#define FWD_STEP(LR) fwd_tile_step32(tile, LR, log_t, r0, log_m, b, rq, q)
        STEP_CASES(lr, FWD_STEP)
#undef FWD_STEP
        r0 += lr;
    }
}

/* The inverse's first log_t rounds on a tile (global block b of 2^log_t words), the same steps;
 * `last.on` where they end the transform. */
DECLSPEC_INLINE void inv_tile_rounds32(LOCAL_AS u32 *tile, u32 log_t, u32 log_n, u32 b, CONST_AS u32 *rq,
                                       last32_t last, u32 q)
{
    u32 steps = (log_t + 3) / 4, s0 = 0;
    UNROLL_STEPS
    for (u32 st = 0; st < steps; st++) {
        u32 lr = log_t / steps + (st < log_t % steps ? 1 : 0);
#define INV_STEP(LR) inv_tile_step32(tile, LR, log_t, s0, log_n, b, rq, last, q)
        STEP_CASES(lr, INV_STEP)
#undef INV_STEP
        s0 += lr;
    }
}

/* The tile kernels' block: work-group g takes block b of 2^log_t words of row
 * g >> (log_n - log_t) into `tile`, each word below 4q taken below 2q where `below_2q` (the
 * inverse's inputs, as the 64-bit inverse takes them); returns the block's address, with b and
 * the row's prime index p. */
DECLSPEC GLOBAL_AS u32 *load_tile32(GLOBAL_AS u32 *data, LOCAL_AS u32 *tile, CONST_AS u64 *moduli, u32 k, u32 log_n,
                                    u32 log_t, u32 below_2q, u32 *b, u32 *p)
{
    u32 log_blocks = log_n - log_t;
    u32 row = GROUP_ID() >> log_blocks;
    *b = GROUP_ID() & ((1u << log_blocks) - 1);
    *p = NTT32_PRIME(row);
    u32 two_q = below_2q ? 2 * (u32)moduli[*p] : 0xffffffffu;
    GLOBAL_AS u32 *x = data + ((u64)row << log_n) + ((u64)*b << log_t);
    for (u32 i = LOCAL_ID(); i < (1u << log_t); i += LOCAL_SIZE()) {
        u32 w = x[i];
        tile[PAD32(i)] = w >= two_q ? w - two_q : w;
    }
    SYNC_THREADS();
    return x;
}

/*
 * Forward: the rounds from 2^log_m blocks on, in shared memory, one work-group per block of
 * 2^(log_n - log_m) <= TILE32 words (row = group / 2^log_m); the output reduced to [0, q).
 */
KERNEL_FQ void ntt32_fwd_slm_u32(GLOBAL_AS u32 *data, CONST_AS u32 *rq32, CONST_AS u64 *roots_q,
                                 CONST_AS u64 *moduli, u32 k, u32 log_n, u32 log_m)
{
    LOCAL_ARRAY(u32, tile, TILE32_WORDS);
    u32 log_t = log_n - log_m, b, p;
    GLOBAL_AS u32 *x = load_tile32(data, tile, moduli, k, log_n, log_t, 0, &b, &p);
    u32 q = (u32)moduli[p];
    fwd_tile_rounds32(tile, log_t, log_m, b, rq32 + NTT_ROW(p), q);
    for (u32 i = LOCAL_ID(); i < (1u << log_t); i += LOCAL_SIZE()) x[i] = reduce4q(tile[PAD32(i)], q);
}

/*
 * Inverse: inputs below 4q; the first log_t rounds (gaps 1 … 2^(log_t - 1)) in shared memory,
 * one work-group per block of 2^log_t <= TILE32 words; where log_t = log_n they are all of them, the last
 * with N^{-1} folded in (canonical output), else the output is below 2q for the global passes.
 */
KERNEL_FQ void ntt32_inv_slm_u32(GLOBAL_AS u32 *data, CONST_AS u32 *irq32, CONST_AS u64 *iroots_q,
                                 CONST_AS u64 *moduli, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q,
                                 CONST_AS u64 *last_w, CONST_AS u64 *last_wq, u32 k, u32 log_n, u32 log_t)
{
    LOCAL_ARRAY(u32, tile, TILE32_WORDS);
    u32 b, p;
    GLOBAL_AS u32 *x = load_tile32(data, tile, moduli, k, log_n, log_t, 1, &b, &p);
    u32 q = (u32)moduli[p];
    last32_t last = last32(log_t == log_n, p, inv_n, inv_n_q, last_w, last_wq);
    inv_tile_rounds32(tile, log_t, log_n, b, irq32 + NTT_ROW(p), last, q);
    for (u32 i = LOCAL_ID(); i < (1u << log_t); i += LOCAL_SIZE()) x[i] = tile[PAD32(i)];
}

/* ---------------- one pass with thread-block clusters (CUDA sm_90+) ----------------
 *
 * ntt.cl's one-pass cluster NTT on 32-bit words: the C = XEHE_CLUSTER = N / TILE32 tiles of a
 * row are the C CTAs of one thread-block cluster, which address each other's shared memory
 * (cluster.h). Forward: each CTA takes TILE32 / C of the columns {j + s·TILE32 : s < C}, does
 * the first log2 C rounds in registers and stores word s into CTA s's tile; after the cluster
 * barrier CTA `rank` holds block `rank` of the C blocks and runs the tile kernel's rounds on it
 * (fwd_tile_rounds32), then writes it once. The inverse mirrors it: the tile's rounds, the
 * barrier, the last log2 C rounds from remote loads straight to global memory, and a barrier so
 * that no CTA exits while its tile is read. DRAM sees one read and one write of the data.
 * Work-items: TILE32 / 16, each holding 16 words in the tile steps and 16 / C columns of C words
 * in the cross-CTA rounds. Compiled into the plans' programs only (src/device/ntt_family/word32.rs:
 * XEHE_CLUSTER = C in {2, 4, 8, 16}, TILE32 = N / C).
 */
#if defined(XEHE_CLUSTER) && IS_CUDA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define LOG_C32 (XEHE_CLUSTER == 16 ? 4u : XEHE_CLUSTER == 8 ? 3u : XEHE_CLUSTER == 4 ? 2u : 1u)
#define KERNEL_CLUSTER32 extern "C" __global__ void __cluster_dims__(XEHE_CLUSTER, 1, 1)
/* log2 TILE32 and log2 N as constants: the tile's steps unroll with constant strides (pad_off32). */
#define LOG_T32 (TILE32 >= 8192 ? 13u : TILE32 == 4096 ? 12u : TILE32 == 2048 ? 11u : TILE32 == 1024 ? 10u : TILE32 == 512 ? 9u : 8u)
#define LOG_N32 (LOG_T32 + LOG_C32)
/* The cluster kernels' work-items: TILE32 / 16 (word32.rs, Tables32::cluster), so that a loop over
 * a work-item's 16 words of the tile (CL32_WORDS(e): e runs over them) has a constant count: it
 * unrolls, and its global loads are in flight together instead of one DRAM latency an iteration. */
#define CL32_ITEMS (TILE32 / R32)
#define CL32_WORDS(e) \
    _Pragma("unroll") for (u32 t_ = 0, e = LOCAL_ID(); t_ < R32; t_++, e += CL32_ITEMS)

/* The forward NTT of one row into this CTA's tile (lazy, below 4q; synchronized): the input row
 * `src`, each word through lift_word where `lift` (mod-down's correction). */
DECLSPEC void fwd32_cluster_tile(LOCAL_AS u32 *tile, CONST_AS u32 *src, u32 lift, lift_t lt, CONST_AS u32 *rq, u32 q)
{
    const u32 T = TILE32, cols = TILE32 / XEHE_CLUSTER;
    u32 rank = cluster_rank();
    u32 remote[XEHE_CLUSTER];
#pragma unroll
    for (u32 s = 0; s < XEHE_CLUSTER; s++) remote[s] = cluster_tile(tile, s);
    for (u32 j = rank * cols + LOCAL_ID(); j < (rank + 1) * cols; j += LOCAL_SIZE()) {
        /* Column j's words from one address plus constants. */
        CONST_AS u32 *col = src + j;
        u32 v[XEHE_CLUSTER];
#pragma unroll
        for (u32 s = 0; s < XEHE_CLUSTER; s++) v[s] = lift ? (u32)lift_word(lt, col[s * T], q) : col[s * T];
        fwd_rounds32(v, LOG_C32, 0, 0, rq, q);
#pragma unroll
        for (u32 s = 0; s < XEHE_CLUSTER; s++) cluster_st32(remote[s] + 4 * PAD32(j), v[s]);
    }
    cluster_sync();
    fwd_tile_rounds32(tile, LOG_T32, LOG_C32, rank, rq, q);
}

/* Forward NTT of row GROUP_ID() / C of `data` in place, canonical output (the arguments of
 * ntt32_fwd_slm_u32 without log_m). */
KERNEL_CLUSTER32 ntt32_fwd_cluster_u32(GLOBAL_AS u32 *data, CONST_AS u32 *rq32, CONST_AS u64 *roots_q,
                                       CONST_AS u64 *moduli, u32 k, u32 log_n)
{
    LOCAL_ARRAY(u32, tile, TILE32_WORDS);
    u32 row = GROUP_ID() / XEHE_CLUSTER, p = NTT32_PRIME(row);
    u32 q = (u32)moduli[p];
    GLOBAL_AS u32 *x = data + ((u64)row << log_n);
    fwd32_cluster_tile(tile, x, 0, lift_init(0, q, 0, 0), rq32 + NTT_ROW(p), q);
    x += (u64)cluster_rank() * TILE32;
    CL32_WORDS(i) x[i] = reduce4q(tile[PAD32(i)], q);
}

/*
 * The mod-down finish as the forward NTT's epilogue (ntt.cl's ntt_fwd_cluster_*fin_u64 on 32-bit
 * words): this CTA's part d of a transformed row (prime q) lies in `tile`, and
 * out[x] = c[x] + P^{-1} (xs[x] + q - d) mod q is written instead (c = 0: nothing added).
 */
DECLSPEC void moddown_fin32(GLOBAL_AS u32 *out, CONST_AS u32 *c, CONST_AS u32 *xs, LOCAL_AS u32 *tile, u32 q, u64 ip,
                            u64 ipq)
{
    u64 w0 = (u64)cluster_rank() * TILE32;
    /* Eight words' loads at a time, then their words: out may be c itself, so the compiler keeps
     * each load behind the previous word's store; all 16 at once would cost registers (72, three
     * CTAs a SM instead of five). */
#pragma unroll
    for (u32 h = 0; h < R32; h += R32 / 2) {
        u32 xv[R32 / 2], cv[R32 / 2];
#pragma unroll
        for (u32 t = 0; t < R32 / 2; t++) {
            u32 e = LOCAL_ID() + (h + t) * CL32_ITEMS;
            xv[t] = xs[w0 + e];
            cv[t] = c ? c[w0 + e] : 0;
        }
#pragma unroll
        for (u32 t = 0; t < R32 / 2; t++) {
            u32 e = LOCAL_ID() + (h + t) * CL32_ITEMS;
            u64 r = moddown_scaled_diff(xv[t], reduce4q(tile[PAD32(e)], q), q, ip, ipq);
            out[w0 + e] = (u32)(c ? add_mod(cv[t], r, q) : r);
        }
    }
}

/* The argument list of the finish kernels below: ntt.cl's MODDOWN_FIN_ARGS without the 64-bit
 * plan's log_m and mode (src/device/ntt_family/word32.rs moddown_finish builds it). */
#define MODDOWN_FIN32_ARGS                                                                              \
    (GLOBAL_AS u32 * out, CONST_AS u32 * last, CONST_AS u64 * r1, CONST_AS u32 * rq32, CONST_AS u64 * roots_q, \
     CONST_AS u64 * moduli, u32 k, u32 log_n, u64 p_last, u64 p_last_r1, CONST_AS u32 * c01, CONST_AS u32 * xs,   \
     CONST_AS u64 * inv_p, CONST_AS u64 * inv_p_q, u32 x_rows_per_poly, u64 c_words)

/* Row `row` = (c, i) of `last` (one row per (polynomial, prime) with `lifted` 0; else one row per
 * polynomial mod p_last, lifted to q_i with mod-down's correction) transformed into `tile`, and
 * the finish written to row (c, i) of out (c01 added below word c_words; xs with
 * x_rows_per_poly rows per polynomial). */
DECLSPEC void fin32_row(LOCAL_AS u32 *tile, u32 row, u32 lifted, GLOBAL_AS u32 *out, CONST_AS u32 *last,
                        CONST_AS u64 *r1, CONST_AS u32 *rq32, CONST_AS u64 *moduli, u32 k,
                        u32 log_n, u64 p_last, u64 p_last_r1, CONST_AS u32 *c01, CONST_AS u32 *xs, CONST_AS u64 *inv_p,
                        CONST_AS u64 *inv_p_q, u32 x_rows_per_poly, u64 c_words)
{
    u32 c = row / k, i = row % k;
    u32 q = (u32)moduli[i];
    lift_t lt = lift_init(lifted ? r1[i] : 0, q, p_last, p_last_r1);
    fwd32_cluster_tile(tile, last + ((u64)(lifted ? c : row) << log_n), lifted, lt, rq32 + NTT_ROW(i), q);
    u64 at = (u64)row << log_n;
    moddown_fin32(out + at, at < c_words ? c01 + at : 0, xs + (((u64)c * x_rows_per_poly + i) << log_n), tile, q,
                  inv_p[i], inv_p_q[i]);
}

/* Hybrid ModDown's finish (FinishSource::Rows): `last` one canonical row per (polynomial, prime). */
KERNEL_CLUSTER32 ntt32_fwd_cluster_fin_u32 MODDOWN_FIN32_ARGS
{
    LOCAL_ARRAY(u32, tile, TILE32_WORDS);
    (void)roots_q;
    fin32_row(tile, GROUP_ID() / XEHE_CLUSTER, 0, out, last, r1, rq32, moduli, k, log_n, 0, 0, c01, xs, inv_p,
              inv_p_q, x_rows_per_poly, c_words);
}

/* SEAL's mod-down / rescale finish (FinishSource::Lift): `last` one row per polynomial mod p_last. */
KERNEL_CLUSTER32 ntt32_fwd_cluster_moddown_fin_u32 MODDOWN_FIN32_ARGS
{
    LOCAL_ARRAY(u32, tile, TILE32_WORDS);
    (void)roots_q;
    fin32_row(tile, GROUP_ID() / XEHE_CLUSTER, 1, out, last, r1, rq32, moduli, k, log_n, p_last, p_last_r1,
              c01, xs, inv_p, inv_p_q, x_rows_per_poly, c_words);
}

/* Hoisted rotations' finish (FinishSource::RowsMany, as ntt.cl's ntt_fwd_cluster_fin_many_u64):
 * rotation h = row / x_rows_per_poly writes its row rr = row % x_rows_per_poly at the device
 * address c01[h]; xs holds every rotation's products (row `row` at row `row`). */
KERNEL_CLUSTER32 ntt32_fwd_cluster_fin_many_u32 MODDOWN_FIN32_ARGS
{
    LOCAL_ARRAY(u32, tile, TILE32_WORDS);
    u32 row = GROUP_ID() / XEHE_CLUSTER, i = row % k;
    u32 q = (u32)moduli[i];
    fwd32_cluster_tile(tile, last + ((u64)row << log_n), 0, lift_init(0, q, 0, 0), rq32 + NTT_ROW(i), q);
    u32 h = row / x_rows_per_poly, rr = row % x_rows_per_poly;
    GLOBAL_AS u32 *dst = (GLOBAL_AS u32 *)((CONST_AS u64 *)c01)[h] + ((u64)rr << log_n);
    moddown_fin32(dst, 0, xs + ((u64)row << log_n), tile, q, inv_p[i], inv_p_q[i]);
}

/* The inverse NTT of one row `src` (inputs below 4q) into row `dst` (canonical; dst may be src). */
DECLSPEC void inv32_cluster(GLOBAL_AS u32 *dst, CONST_AS u32 *src, u32 p, CONST_AS u32 *irq32,
                            CONST_AS u64 *moduli, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q, CONST_AS u64 *last_w,
                            CONST_AS u64 *last_wq, u32 k, u32 log_n)
{
    LOCAL_ARRAY(u32, tile, TILE32_WORDS);
    const u32 T = TILE32, cols = TILE32 / XEHE_CLUSTER;
    u32 rank = cluster_rank(), q = (u32)moduli[p];
    CONST_AS u32 *rq = irq32 + NTT_ROW(p);
    CONST_AS u32 *own = src + (u64)rank * T;
    CL32_WORDS(i) tile[PAD32(i)] = csub32(own[i], 2 * q);
    SYNC_THREADS();
    inv_tile_rounds32(tile, LOG_T32, LOG_N32, rank, rq, last32(0, p, inv_n, inv_n_q, last_w, last_wq), q);
    cluster_sync();
    last32_t last = last32(1, p, inv_n, inv_n_q, last_w, last_wq);
    u32 remote[XEHE_CLUSTER];
#pragma unroll
    for (u32 s = 0; s < XEHE_CLUSTER; s++) remote[s] = cluster_tile(tile, s);
    for (u32 j = rank * cols + LOCAL_ID(); j < (rank + 1) * cols; j += LOCAL_SIZE()) {
        u32 v[XEHE_CLUSTER];
#pragma unroll
        for (u32 s = 0; s < XEHE_CLUSTER; s++) v[s] = cluster_ld32(remote[s] + 4 * PAD32(j));
        inv_rounds32(v, LOG_C32, LOG_N32, LOG_T32, 0, rq, last, q);
        GLOBAL_AS u32 *col = dst + j;
#pragma unroll
        for (u32 s = 0; s < XEHE_CLUSTER; s++) col[s * T] = v[s];
    }
    /* No CTA may exit (freeing its shared memory) while another still reads its tile. */
    cluster_sync();
}

/* Inverse NTT of row GROUP_ID() / C of `data` in place, canonical output (the arguments of
 * ntt32_inv_slm_u32 without log_t). */
KERNEL_CLUSTER32 ntt32_inv_cluster_u32(GLOBAL_AS u32 *data, CONST_AS u32 *irq32, CONST_AS u64 *iroots_q,
                                       CONST_AS u64 *moduli, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q,
                                       CONST_AS u64 *last_w, CONST_AS u64 *last_wq, u32 k, u32 log_n)
{
    u32 row = GROUP_ID() / XEHE_CLUSTER;
    GLOBAL_AS u32 *x = data + ((u64)row << log_n);
    (void)iroots_q;
    inv32_cluster(x, x, NTT32_PRIME(row), irq32, moduli, inv_n, inv_n_q, last_w, last_wq, k, log_n);
}

/* ntt32_inv_cluster_u32 out of place from a strided source (ntt.cl's ntt_inv_cluster_from_u64):
 * row r of `data` = INTT of row r · src_stride + src_row of `in` (`in` unchanged). */
KERNEL_CLUSTER32 ntt32_inv_cluster_from_u32(GLOBAL_AS u32 *data, CONST_AS u32 *irq32, CONST_AS u64 *iroots_q,
                                            CONST_AS u64 *moduli, CONST_AS u64 *inv_n, CONST_AS u64 *inv_n_q,
                                            CONST_AS u64 *last_w, CONST_AS u64 *last_wq, u32 k, u32 log_n,
                                            CONST_AS u32 *in, u32 src_stride, u32 src_row)
{
    u32 row = GROUP_ID() / XEHE_CLUSTER;
    u64 r = (u64)row * src_stride + src_row;
    (void)iroots_q;
    inv32_cluster(data + ((u64)row << log_n), in + (r << log_n), NTT32_PRIME(row), irq32, moduli, inv_n,
                  inv_n_q, last_w, last_wq, k, log_n);
}
#endif /* XEHE_CLUSTER on sm_90+ */
