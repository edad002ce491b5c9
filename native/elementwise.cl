/*
 * elementwise.cl — element-wise RNS polynomial kernels for the evaluator (add, sub, negate,
 * Hadamard product, plaintext broadcast, the fused ciphertext tensor product).
 *
 * Layout: `rows × N` words; row r is reduced modulo moduli[r % k]. `total` = rows × N.
 * Barrett constants r0/r1 are SEAL's const_ratio[0..2] per prime. Outputs canonical.
 * Every kernel is a grid-stride loop, so any launch size is correct.
 */
#include "modarith.h"

#define EW_LOOP for (u64 i = GLOBAL_ID(); i < total; i += GLOBAL_SIZE())
/* Row and broadcast index in 32-bit arithmetic (rows < 2^32): a 64-bit `%` is a long emulated
 * division on GPUs, more work than the memory-bound operation itself at small N. */
#define EW_PRIME (((u32)(i >> log_n)) % k)
/* i mod b_words for b_words a multiple of N (the broadcast plaintext of multiply_plain). */
#define ONE_EW ((u64)1)
#define EW_BCAST(bw) (((u64)(((u32)(i >> log_n)) % (u32)((bw) >> log_n)) << log_n) | (i & ((ONE_EW << log_n) - 1)))

KERNEL_FQ void ew_add_u64(GLOBAL_AS u64 *out, CONST_AS u64 *a, CONST_AS u64 *b, CONST_AS u64 *moduli, u32 k,
                          u32 log_n, u64 total)
{
    EW_LOOP { out[i] = add_mod(a[i], b[i], moduli[EW_PRIME]); }
}

KERNEL_FQ void ew_sub_u64(GLOBAL_AS u64 *out, CONST_AS u64 *a, CONST_AS u64 *b, CONST_AS u64 *moduli, u32 k,
                          u32 log_n, u64 total)
{
    EW_LOOP { out[i] = sub_mod(a[i], b[i], moduli[EW_PRIME]); }
}

KERNEL_FQ void ew_neg_u64(GLOBAL_AS u64 *out, CONST_AS u64 *a, CONST_AS u64 *moduli, u32 k, u32 log_n, u64 total)
{
    EW_LOOP { out[i] = neg_mod(a[i], moduli[EW_PRIME]); }
}

/* out[i] = a[i] * b[i mod (k*N)]: b is one polynomial broadcast over every polynomial of a
 * (multiply_plain), or a full operand when it has as many rows as a. */
KERNEL_FQ void ew_mul_u64(GLOBAL_AS u64 *out, CONST_AS u64 *a, CONST_AS u64 *b, CONST_AS u64 *moduli,
                          CONST_AS u64 *r0, CONST_AS u64 *r1, u32 k, u32 log_n, u64 b_words, u64 total)
{
    EW_LOOP {
        u32 p = EW_PRIME;
        out[i] = mul_mod(a[i], b[EW_BCAST(b_words)], moduli[p], r0[p], r1[p]);
    }
}

/*
 * Tensor product of two ciphertexts of sizes sa and sb (the fused kernel of the paper's
 * MulLin): out[t] = sum_{i+j=t} a[i] * b[j], with a 128-bit mad chain and one reduction per
 * output word (mad_mod, §V-A1; XEHE_NO_MAD=1 reduces after every product instead, for the
 * ablation). One thread per (limb, coefficient); poly stride = k × N words.
 */
KERNEL_FQ void tensor_u64(GLOBAL_AS u64 *out, CONST_AS u64 *a, CONST_AS u64 *b, CONST_AS u64 *moduli,
                          CONST_AS u64 *r0, CONST_AS u64 *r1, u32 k, u32 log_n, u32 sa, u32 sb)
{
    u64 poly = (u64)k << log_n;
    for (u64 i = GLOBAL_ID(); i < poly; i += GLOBAL_SIZE()) {
        u32 p = EW_PRIME;
        u64 q = moduli[p], c0 = r0[p], c1 = r1[p];
        for (u32 t = 0; t + 1 < sa + sb; t++) {
            u32 lo = t + 1 > sb ? t + 1 - sb : 0;
            u32 hi = t < sa - 1 ? t : sa - 1;
#if XEHE_NO_MAD
            u64 acc = 0;
            for (u32 x = lo; x <= hi; x++) acc = add_mod(acc, mul_mod(a[x * poly + i], b[(t - x) * poly + i], q, c0, c1), q);
            out[t * poly + i] = acc;
#else
            u128_t acc;
            acc.lo = 0;
            acc.hi = 0;
            for (u32 x = lo; x <= hi; x++) acc = mad64_wide(a[x * poly + i], b[(t - x) * poly + i], acc);
            out[t * poly + i] = barrett_reduce_128(acc, q, c0, c1);
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
    GLOBAL_AS u64 *out = (GLOBAL_AS u64 *)d[1];
    CONST_AS u64 *a = (CONST_AS u64 *)d[2];
    CONST_AS u64 *b = (CONST_AS u64 *)d[3];
    CONST_AS u64 *moduli = (CONST_AS u64 *)d[4];
    CONST_AS u64 *r0 = (CONST_AS u64 *)d[5];
    CONST_AS u64 *r1 = (CONST_AS u64 *)d[6];
    u64 total = d[7], b_words = d[8];
    u32 k = (u32)d[9], log_n = (u32)(d[9] >> 32);
    EW_LOOP {
        u32 p = EW_PRIME;
        u64 q = moduli[p];
        switch (kind) {
        case 0: out[i] = add_mod(a[i], b[i], q); break;
        case 1: out[i] = sub_mod(a[i], b[i], q); break;
        case 2: out[i] = neg_mod(a[i], q); break;
        default: out[i] = mul_mod(a[i], b[EW_BCAST(b_words)], q, r0[p], r1[p]); break;
        }
    }
}
#endif /* IS_CUDA */
