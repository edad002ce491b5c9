/*
 * elementwise.cl — element-wise RNS polynomial kernels for the evaluator (add, sub, negate,
 * Hadamard product, plaintext broadcast, the fused ciphertext tensor product).
 *
 * Layout: `rows × N` words; row r is reduced modulo moduli[r % k]. `total` = rows × N.
 * Barrett constants r0/r1 are SEAL's const_ratio[0..2] per prime. Outputs canonical. Data
 * words are DWORD (word.h: u32 with XEHE_WORD32, else u64); constants are u64.
 * Every kernel is a grid-stride loop, so any launch size is correct.
 */
#include "modarith.h"

/* Row and broadcast index in 32-bit arithmetic (rows < 2^32): a 64-bit `%` is a long emulated
 * division on GPUs, more work than the memory-bound operation itself at small N. */
#define EW_PRIME (((u32)(i >> log_n)) % k)

/*
 * The add/sub/negate/multiply kernels are memory-bound: each work-item handles a pair of
 * words (i, i + 1), i even, with one 16-byte access per operand (fewer memory instructions
 * in flight for the same bytes: the latency of one large add at N = 65536 is the kernel's).
 * N is even, so both words of a pair lie in one row (one prime) and a broadcast index stays
 * even; operands are whole device buffers or start at a whole row, so 16-byte aligned.
 * `total` (words) is even. Launch total / 2 work-items (any count is correct).
 */
#define EW_PAIRS for (u64 j = GLOBAL_ID(), i = j << 1; i < total; j += GLOBAL_SIZE(), i = j << 1)
/* The data pair at pair index j / at word w (even), read as u64 values; stored from them. */
#define PAIR(ptr) dpair_widen(((GLOBAL_AS DWORD2 *)(ptr))[j])
#define PAIR_AT(ptr, w) dpair_widen(((GLOBAL_AS DWORD2 *)(ptr))[(w) >> 1])
#define SET_PAIR(ptr, v) (((GLOBAL_AS DWORD2 *)(ptr))[j] = dpair_narrow(v))
#define SET_PAIR_AT(ptr, w, v) (((GLOBAL_AS DWORD2 *)(ptr))[(w) >> 1] = dpair_narrow(v))
/* out pair = f(a pair[, b pair]) applied word by word. */
#define EW_APPLY2(out, OP, pa, pb, ...)                                                              \
    do {                                                                                               \
        u64x2 a_ = (pa), b_ = (pb), o_;                                                                \
        o_.x = OP(a_.x, b_.x, __VA_ARGS__);                                                            \
        o_.y = OP(a_.y, b_.y, __VA_ARGS__);                                                            \
        SET_PAIR(out, o_);                                                                             \
    } while (0)

KERNEL_FQ void ew_add_u64(GLOBAL_AS DWORD *out, CONST_AS DWORD *a, CONST_AS DWORD *b, CONST_AS u64 *moduli, u32 k,
                          u32 log_n, u64 total)
{
    EW_PAIRS { EW_APPLY2(out, add_mod, PAIR(a), PAIR(b), moduli[EW_PRIME]); }
}

KERNEL_FQ void ew_sub_u64(GLOBAL_AS DWORD *out, CONST_AS DWORD *a, CONST_AS DWORD *b, CONST_AS u64 *moduli, u32 k,
                          u32 log_n, u64 total)
{
    EW_PAIRS { EW_APPLY2(out, sub_mod, PAIR(a), PAIR(b), moduli[EW_PRIME]); }
}

/* neg_mod with add_mod's signature (the second operand is ignored). */
#define NEG2(x, unused, q) neg_mod(x, q)

KERNEL_FQ void ew_neg_u64(GLOBAL_AS DWORD *out, CONST_AS DWORD *a, CONST_AS u64 *moduli, u32 k, u32 log_n, u64 total)
{
    EW_PAIRS { EW_APPLY2(out, NEG2, PAIR(a), PAIR(a), moduli[EW_PRIME]); }
}

/*
 * out[i] = a[i] * b[i mod b_words]: b is one polynomial broadcast over every polynomial of a
 * (multiply_plain), or a full operand when b_words = total. `total` is a multiple of b_words.
 * The loop runs over b's pairs and applies each to every repeat of it in a, so b is read from
 * DRAM once: a grid stride over a's words read the plaintext once per ciphertext polynomial,
 * 1.2x the floor at N = 65536 where the second read no longer hits L2 (BENCHMARKS.md).
 */
#define EW_MUL_BCAST(out, a, b, moduli, r0, r1, b_words, total)                                      \
    for (u64 j = GLOBAL_ID(), i = j << 1; i < (b_words); j += GLOBAL_SIZE(), i = j << 1) {         \
        u64x2 b_ = PAIR(b);                                                                            \
        for (u64 w = i; w < (total); w += (b_words)) {                                                 \
            u32 p = ((u32)(w >> log_n)) % k;                                                           \
            u64 q = moduli[p], c0 = r0[p], c1 = r1[p];                                                 \
            u64x2 a_ = PAIR_AT(a, w), o_;                                                              \
            o_.x = mul_mod(a_.x, b_.x, q, c0, c1);                                                     \
            o_.y = mul_mod(a_.y, b_.y, q, c0, c1);                                                     \
            SET_PAIR_AT(out, w, o_);                                                                   \
        }                                                                                              \
    }

KERNEL_FQ void ew_mul_u64(GLOBAL_AS DWORD *out, CONST_AS DWORD *a, CONST_AS DWORD *b, CONST_AS u64 *moduli,
                          CONST_AS u64 *r0, CONST_AS u64 *r1, u32 k, u32 log_n, u64 b_words, u64 total)
{
    EW_MUL_BCAST(out, a, b, moduli, r0, r1, b_words, total);
}

/* Constant operations (multiply_const / add_const): s holds one residue per prime. mode 0:
 * out[i] = a[i] * s[prime]; mode 1: out[i] = a[i] + s[prime] for i < add_words (the first
 * polynomial), a[i] copied past it. */
KERNEL_FQ void ew_scalar_u64(GLOBAL_AS DWORD *out, CONST_AS DWORD *a, CONST_AS u64 *s, CONST_AS u64 *moduli,
                             CONST_AS u64 *r0, CONST_AS u64 *r1, u32 k, u32 log_n, u32 mode, u64 add_words,
                             u64 total)
{
    for (u64 i = GLOBAL_ID(); i < total; i += GLOBAL_SIZE()) {
        u32 p = EW_PRIME;
        u64 x = a[i];
        if (mode == 0)
            x = mul_mod(x, s[p], moduli[p], r0[p], r1[p]);
        else if (i < add_words)
            x = add_mod(x, s[p], moduli[p]);
        out[i] = (DWORD)x;
    }
}

/*
 * Tensor product of two ciphertexts of sizes sa and sb (the fused kernel of the paper's
 * MulLin): out[t] = sum_{i+j=t} a[i] * b[j], with a 128-bit mad chain and one reduction per
 * output word (mad_mod, §V-A1; XEHE_NO_MAD=1 reduces after every product instead, for the
 * ablation). One work-item per (limb, coefficient), or per pair of coefficients for two 2-part
 * operands; poly stride = k × N words.
 */
KERNEL_FQ void tensor_u64(GLOBAL_AS DWORD *out, CONST_AS DWORD *a, CONST_AS DWORD *b, CONST_AS u64 *moduli,
                          CONST_AS u64 *r0, CONST_AS u64 *r1, u32 k, u32 log_n, u32 sa, u32 sb)
{
    u64 poly = (u64)k << log_n;
#if !XEHE_NO_MAD
    if (sa == 2 && sb == 2) {
        /* Two 2-part ciphertexts (multiply's common case): a pair of words per work-item (the
         * host launches poly / 2), its four operand pairs loaded together in 16-byte accesses,
         * one memory round trip for twice the bytes in flight (H200, N = 2^16, 30 primes:
         * multiply+relinearize_hybrid 614 against 618 µs with one word per work-item). */
        for (u64 j = GLOBAL_ID(), i = j << 1; i < poly; j += GLOBAL_SIZE(), i = j << 1) {
            u32 p = EW_PRIME;
            u64x2 a0 = PAIR(a), a1 = PAIR_AT(a, poly + i), b0 = PAIR(b), b1 = PAIR_AT(b, poly + i);
            u64 q = moduli[p], c0 = r0[p], c1 = r1[p];
            mac_t z = mac_zero();
            u64x2 d0, d1, d2;
            d0.x = mac_value(mac_add(z, a0.x, b0.x, q, c1), q, c0, c1);
            d0.y = mac_value(mac_add(z, a0.y, b0.y, q, c1), q, c0, c1);
            d1.x = mac_value(mac_add(mac_add(z, a0.x, b1.x, q, c1), a1.x, b0.x, q, c1), q, c0, c1);
            d1.y = mac_value(mac_add(mac_add(z, a0.y, b1.y, q, c1), a1.y, b0.y, q, c1), q, c0, c1);
            d2.x = mac_value(mac_add(z, a1.x, b1.x, q, c1), q, c0, c1);
            d2.y = mac_value(mac_add(z, a1.y, b1.y, q, c1), q, c0, c1);
            SET_PAIR(out, d0);
            SET_PAIR_AT(out, poly + i, d1);
            SET_PAIR_AT(out, 2 * poly + i, d2);
        }
        return;
    }
#endif
    for (u64 i = GLOBAL_ID(); i < poly; i += GLOBAL_SIZE()) {
        u32 p = EW_PRIME;
        u64 q = moduli[p], c0 = r0[p], c1 = r1[p];
        for (u32 t = 0; t + 1 < sa + sb; t++) {
            u32 lo = t + 1 > sb ? t + 1 - sb : 0;
            u32 hi = t < sa - 1 ? t : sa - 1;
#if XEHE_NO_MAD
            u64 acc = 0;
            for (u32 x = lo; x <= hi; x++) acc = add_mod(acc, mul_mod(a[x * poly + i], b[(t - x) * poly + i], q, c0, c1), q);
            out[t * poly + i] = (DWORD)acc;
#else
            mac_t acc = mac_zero();
            for (u32 x = lo; x <= hi; x++) acc = mac_add(acc, a[x * poly + i], b[(t - x) * poly + i], q, c1);
            out[t * poly + i] = (DWORD)mac_value(acc, q, c0, c1);
#endif
        }
    }
}

#if IS_CUDA
/*
 * Launch coalescing (CUDA only: descriptors carry raw device addresses). One launch runs many
 * queued element-wise operations of the kinds above; block row y runs descriptor y, a
 * grid-stride loop over its words in x. Descriptor (EW_DESC_WORDS u64 words): kind (0 add,
 * 1 sub, 2 negate, 3 multiply with b broadcast over b_words, a multiple of N), out, a, b, moduli, r0, r1, total,
 * b_words, k | log_n << 32. The host only coalesces operations with no buffer in common, so
 * the order within a launch does not matter.
 */
#define EW_DESC_WORDS 10
KERNEL_FQ void ew_batched_u64(CONST_AS u64 *desc)
{
    CONST_AS u64 *d = desc + (u64)EW_DESC_WORDS * GROUP_ID_Y();
    u32 kind = (u32)d[0];
    GLOBAL_AS DWORD *out = (GLOBAL_AS DWORD *)d[1];
    CONST_AS DWORD *a = (CONST_AS DWORD *)d[2];
    CONST_AS DWORD *b = (CONST_AS DWORD *)d[3];
    CONST_AS u64 *moduli = (CONST_AS u64 *)d[4];
    CONST_AS u64 *r0 = (CONST_AS u64 *)d[5];
    CONST_AS u64 *r1 = (CONST_AS u64 *)d[6];
    u64 total = d[7], b_words = d[8];
    u32 k = (u32)d[9], log_n = (u32)(d[9] >> 32);
    if (kind == 3) {
        EW_MUL_BCAST(out, a, b, moduli, r0, r1, b_words, total);
        return;
    }
    EW_PAIRS {
        u32 p = EW_PRIME;
        u64 q = moduli[p];
        switch (kind) {
        case 0: EW_APPLY2(out, add_mod, PAIR(a), PAIR(b), q); break;
        case 1: EW_APPLY2(out, sub_mod, PAIR(a), PAIR(b), q); break;
        case 2: EW_APPLY2(out, NEG2, PAIR(a), PAIR(a), q); break;
        }
    }
}

/*
 * A sum of plaintext products in one pass (a linear transform's baby steps: SEAL's
 * multiply_plain of each term, then add, without the intermediate products in memory):
 * out = sum_t a_t (*) b_t (mod q), b_t broadcast over every b_words words of a_t. table holds
 * the 2 * terms pointers a_0, b_0, a_1, b_1, ... Each product is reduced (mul_mod) and the sum
 * kept reduced (add_mod), so the words equal the term-by-term result. A work-item takes a pair
 * of b's words and the same pair of two consecutive repeats of a (a ciphertext's c0 and c1), so
 * each word of b crosses DRAM once for both (b_words is a whole number of rows, so the prime is
 * the same in every repeat).
 */
KERNEL_FQ void ew_mul_sum_u64(GLOBAL_AS DWORD *out, CONST_AS u64 *table, CONST_AS u64 *moduli, CONST_AS u64 *r0,
                              CONST_AS u64 *r1, u32 k, u32 log_n, u32 terms, u64 b_words, u64 total)
{
    u64 reps = total / b_words;
    for (u64 j = GLOBAL_ID(), i = j << 1; i < b_words; j += GLOBAL_SIZE(), i = j << 1) {
        u32 p = EW_PRIME;
        u64 q = moduli[p], c0 = r0[p], c1 = r1[p];
        for (u64 r = 0; r < reps; r += 2) {
            u32 two = r + 1 < reps;
            u64 at = r * b_words + i;
            u64x2 s0, s1;
            s0.x = 0;
            s0.y = 0;
            s1.x = 0;
            s1.y = 0;
            for (u32 t = 0; t < terms; t++) {
                CONST_AS DWORD *a = (CONST_AS DWORD *)table[2 * t];
                CONST_AS DWORD *b = (CONST_AS DWORD *)table[2 * t + 1];
                u64x2 b_ = PAIR_AT(b, i), a0 = PAIR_AT(a, at);
                s0.x = add_mod(s0.x, mul_mod(a0.x, b_.x, q, c0, c1), q);
                s0.y = add_mod(s0.y, mul_mod(a0.y, b_.y, q, c0, c1), q);
                if (two) {
                    u64x2 a1 = PAIR_AT(a, at + b_words);
                    s1.x = add_mod(s1.x, mul_mod(a1.x, b_.x, q, c0, c1), q);
                    s1.y = add_mod(s1.y, mul_mod(a1.y, b_.y, q, c0, c1), q);
                }
            }
            SET_PAIR_AT(out, at, s0);
            if (two)
                SET_PAIR_AT(out, at + b_words, s1);
        }
    }
}

/*
 * A linear combination with constants in one pass (polynomial evaluation's baby-step sums:
 * multiply_const of each term, then add, then add_const): out = c + sum_t a_t * s_t (mod q),
 * s holding `terms` rows of k residues (one constant per term and prime), c (k residues) added
 * to the first add_words words (the first polynomial). table holds the terms' pointers, then
 * their word counts (a term shorter than total adds nothing beyond its words). Each
 * product reduced (mul_mod), the sum kept reduced: the words of the term-by-term result.
 */
KERNEL_FQ void ew_const_sum_u64(GLOBAL_AS DWORD *out, CONST_AS u64 *table, CONST_AS u64 *s, CONST_AS u64 *c,
                                CONST_AS u64 *moduli, CONST_AS u64 *r0, CONST_AS u64 *r1, u32 k, u32 log_n,
                                u32 terms, u64 add_words, u64 total)
{
    for (u64 j = GLOBAL_ID(), i = j << 1; i < total; j += GLOBAL_SIZE(), i = j << 1) {
        u32 p = EW_PRIME;
        u64 q = moduli[p], c0 = r0[p], c1 = r1[p];
        u64x2 acc;
        acc.x = i < add_words ? c[p] : 0;
        acc.y = acc.x;
        for (u32 t = 0; t < terms; t++) {
            if (i >= table[terms + t]) continue;
            CONST_AS DWORD *a = (CONST_AS DWORD *)table[t];
            u64 st = s[(u64)t * k + p];
            u64x2 a_ = PAIR_AT(a, i);
            acc.x = add_mod(acc.x, mul_mod(a_.x, st, q, c0, c1), q);
            acc.y = add_mod(acc.y, mul_mod(a_.y, st, q, c0, c1), q);
        }
        SET_PAIR_AT(out, i, acc);
    }
}
#endif /* IS_CUDA */
