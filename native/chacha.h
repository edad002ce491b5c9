/*
 * chacha.h — the counter-mode sampler of hybrid keys' uniform halves (src/ckks/key_prng.rs):
 * word w of a digit's half is the first of ChaCha12(key, stream t).word64(w), t = 0, 1, …,
 * below SEAL's rejection bound, reduced modulo its limb's prime. Used where a key's image is
 * made (prng.cl) and inside the key-switching inner products that read compact keys
 * (keyswitch.cl).
 */
#ifndef XEHE_CHACHA_H
#define XEHE_CHACHA_H
#include "portable.h"
#include "modarith.h"

DECLSPEC u32 chacha_rotl(u32 x, u32 n) { return (x << n) | (x >> (32u - n)); }

#define CHACHA_QR(a, b, c, d)                                                                                          \
    a += b; d = chacha_rotl(d ^ a, 16u);                                                                               \
    c += d; b = chacha_rotl(b ^ c, 12u);                                                                               \
    a += b; d = chacha_rotl(d ^ a, 8u);                                                                                \
    c += d; b = chacha_rotl(b ^ c, 7u);

/*
 * Word j (< 8) of 64 bits of ChaCha12 block `block` of stream `stream` under the key k0…k7: the
 * block's 32-bit words 2j (low) and 2j + 1 (high). The state is RFC 8439's with a 64-bit block
 * counter in words 12–13 and a 64-bit stream number in words 14–15 (rand_chacha's ChaCha12Rng).
 * All 8 words come back in out[8].
 */
DECLSPEC void chacha12_block(const u32 *k, u64 block, u64 stream, u64 *out)
{
    u32 x0 = 0x61707865u, x1 = 0x3320646eu, x2 = 0x79622d32u, x3 = 0x6b206574u;
    u32 x4 = k[0], x5 = k[1], x6 = k[2], x7 = k[3], x8 = k[4], x9 = k[5], x10 = k[6], x11 = k[7];
    u32 x12 = (u32)block, x13 = (u32)(block >> 32), x14 = (u32)stream, x15 = (u32)(stream >> 32);
    u32 y0 = x0, y1 = x1, y2 = x2, y3 = x3, y4 = x4, y5 = x5, y6 = x6, y7 = x7;
    u32 y8 = x8, y9 = x9, y10 = x10, y11 = x11, y12 = x12, y13 = x13, y14 = x14, y15 = x15;
#pragma unroll
    for (u32 r = 0; r < 6; r++) {
        CHACHA_QR(y0, y4, y8, y12) CHACHA_QR(y1, y5, y9, y13) CHACHA_QR(y2, y6, y10, y14) CHACHA_QR(y3, y7, y11, y15)
        CHACHA_QR(y0, y5, y10, y15) CHACHA_QR(y1, y6, y11, y12) CHACHA_QR(y2, y7, y8, y13) CHACHA_QR(y3, y4, y9, y14)
    }
    out[0] = (u64)(y0 + x0) | ((u64)(y1 + x1) << 32);
    out[1] = (u64)(y2 + x2) | ((u64)(y3 + x3) << 32);
    out[2] = (u64)(y4 + x4) | ((u64)(y5 + x5) << 32);
    out[3] = (u64)(y6 + x6) | ((u64)(y7 + x7) << 32);
    out[4] = (u64)(y8 + x8) | ((u64)(y9 + x9) << 32);
    out[5] = (u64)(y10 + x10) | ((u64)(y11 + x11) << 32);
    out[6] = (u64)(y12 + x12) | ((u64)(y13 + x13) << 32);
    out[7] = (u64)(y14 + x14) | ((u64)(y15 + x15) << 32);
}

/*
 * A compact key's leading block (src/device/gpu/key_expand.rs, CompactShape; N words): the
 * range zero_begin, zero_end of component 1's zero rows (a key for fewer levels than it
 * stores), then per stored row its prime, SEAL's rejection bound and Barrett ratio word 1,
 * then per digit the ChaCha key (4 words, little-endian). Component 0 follows, digit-major.
 */
#define COMPACT_SEED(meta, rows, j) ((meta) + 2 + 3 * (u64)(rows) + 4 * (u64)(j))

/* Words x0 … x0 + 7 (x0 a multiple of 8) of row `row` of digit j's component 1 of the compact
 * key whose leading block is `meta` (`rows` stored rows), reduced; 0 on the zero rows. */
DECLSPEC void compact_key_words(CONST_AS u64 *meta, u32 rows, u32 j, u32 row, u64 x0, u32 log_n, u64 *v)
{
    if (row >= meta[0] && row < meta[1]) {
#pragma unroll
        for (u32 i = 0; i < 8; i++) v[i] = 0;
        return;
    }
    u32 k[8];
    CONST_AS u64 *seed = COMPACT_SEED(meta, rows, j);
#pragma unroll
    for (u32 i = 0; i < 4; i++) {
        k[2 * i] = (u32)seed[i];
        k[2 * i + 1] = (u32)(seed[i] >> 32);
    }
    CONST_AS u64 *c = meta + 2 + 3 * (u64)row;
    u64 q = c[0], bound = c[1], r1 = c[2];
    /* Block index of word w = row·N + x0 of the digit's half: 8 words a block. */
    u64 block = (((u64)row << log_n) + x0) >> 3;
    chacha12_block(k, block, 0, v);
    /* Unrolled, so v[] and again[] stay in registers (a constant index each). */
#pragma unroll
    for (u32 i = 0; i < 8; i++) {
        u64 r = v[i];
        for (u64 t = 1; r >= bound; t++) {
            u64 again[8];
            chacha12_block(k, block, t, again);
            r = again[i];
        }
        v[i] = barrett_reduce_64(r, q, r1);
    }
}

#endif
