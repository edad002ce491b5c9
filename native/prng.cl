/*
 * prng.cl — a hybrid key's device image made from its compact form (chacha.h), where a key
 * switch cannot read the compact form itself (src/ckks/device/hybrid.rs).
 */
#include "chacha.h"

/*
 * A key's device image from its compact form `key` (chacha.h): `out` gets, per digit j of
 * `digits`, component 0 (`rows` limbs of N = 2^log_n words) copied from the compact form and
 * component 1 generated from the digit's seed. With PRNG_PERMUTED (Galois keys, stored
 * permuted by the inverse automorphism), generated word x of a row goes to fwd[x] (fwd: the
 * inverse of the host's permutation, N 32-bit entries after component 0), as the host permutes.
 * One work-item per 8 words (a ChaCha block) of one row of one digit.
 */
KERNEL_FQ void expand_key_u64(GLOBAL_AS u64 *out, CONST_AS u64 *key, CONST_AS u32 *fwd, u32 digits, u32 rows,
                              u32 log_n)
{
    u64 n = (u64)1 << log_n;
    u64 per_row = n >> 3;
    u64 total = (u64)digits * rows * per_row;
    CONST_AS u64 *b = key + n;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u64 blk = g % per_row;
        u64 rest = g / per_row;
        u32 row = (u32)(rest % rows);
        u32 j = (u32)(rest / rows);
        u64 x0 = blk << 3;
        CONST_AS u64 *src = b + (((u64)j * rows + row) << log_n) + x0;
        GLOBAL_AS u64 *c0 = out + (((u64)j * 2 * rows + row) << log_n) + x0;
#pragma unroll
        for (u32 i = 0; i < 8; i++) c0[i] = src[i];
        GLOBAL_AS u64 *c1 = out + (((u64)j * 2 * rows + rows + row) << log_n);
        u64 v[8];
        compact_key_words(key, rows, j, row, x0, log_n, v);
#pragma unroll
        for (u32 i = 0; i < 8; i++) {
#ifdef PRNG_PERMUTED
            c1[fwd[x0 + i]] = v[i];
#else
            c1[x0 + i] = v[i];
#endif
        }
    }
}
