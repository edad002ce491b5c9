/*
 * rns.cl — RNS base conversion for hybrid key switching (src/ckks/hybrid.rs: ModUp and ModDown;
 * SEAL util::BaseConverter, Bajard–Eynard–Hasan–Zucca FastBConv; generalized key switching of
 * TensorFHE, Fan et al., HPCA 2023, §II-B). The host glue is src/device/gpu/hybrid.rs; the
 * arithmetic is the CPU reference's (src/math/base_conv.rs), so results are bit-identical.
 * Rows of residues are DWORD (word.h); constants u64.
 */
#include "modarith.h"

/* Scaled words of a digit held in registers by rns_conv_u64 (the rest of a wider digit is read
 * and scaled again); the host sets it to the digit size, at most 16. */
#ifndef RNS_REG_DIGIT
#define RNS_REG_DIGIT 16
#endif

/* Coefficients of one work-item (RNS_COEFS of them, N / RNS_COEFS apart): each output's constants
 * and addresses are computed once for all of them; the host sets it from Tuning::conv_coefs. */
#ifndef RNS_COEFS
#define RNS_COEFS 2
#endif

/* Output limbs whose matrix rows and constants a work-group stages in local memory at a time
 * (rns_conv_u64), and the 32-bit words a row takes there: a term's entry b on 32-bit words, the
 * packed pair b, bt on 64-bit words, padded to whole uint4s. */
#define RNS_STAGE_OUTS 64
#if XEHE_WORD32
#define RNS_TERM_WORDS 1
#else
#define RNS_TERM_WORDS 4
#endif
#define RNS_STAGE_ROW ((RNS_REG_DIGIT * RNS_TERM_WORDS + 3) / 4 * 4)

/* RNS_MIN_BLOCKS (CUDA, from Tuning::conv_min_blocks): CTAs of 256 work-items (the CUDA
 * launcher's grid-stride block) each SM must hold, which caps the registers per work-item. */
#if IS_CUDA && defined(RNS_MIN_BLOCKS)
#define RNS_KERNEL extern "C" __global__ void __launch_bounds__(256, RNS_MIN_BLOCKS)
#else
#define RNS_KERNEL KERNEL_FQ void
#endif

/*
 * A dot product of words below 2^60 in 30-bit limbs, reduced modulo an output prime m with one
 * 64-bit high product. Each scaled input y = y0 + y1 2^30 is packed as y1 << 32 | y0
 * (limb_pack); each matrix entry b comes from the host as two packed words, b and
 * bt = [b 2^30]_m, so y b = y0 b + y1 bt (mod m) and a term adds
 *   s0 += y0 b0 + y1 bt0,   s1 += y0 b1 + y1 bt1        (sum = s0 + s1 2^30 mod m),
 * four 32x32->64 multiply-adds (CUDA: IMAD.WIDE.U32 with a 64-bit addend) and no carries:
 * every product is below 2^60, so LIMB_TERMS = 7 terms (14 products) plus a carried residue
 * (< 2^60) stay below 2^64. The sum V = s0 + s1 2^30 is then below 2^94, and limb_reduce
 * needs one high product by mu = floor(2^94 / m) where the 128-bit Barrett reduction of the
 * earlier form (three limb sums folded to 2^124) took about twenty IMAD-pipe instructions
 * (SASS, BENCHMARKS.md). Longer digits reduce every LIMB_TERMS terms and carry the
 * residue into the next group's s0.
 */
#define LIMB_MASK 0x3fffffffUL
#if XEHE_WORD32
/* Every prime below 2^30: a term is one product below 2^60, so 15 of them and a carried
 * residue stay below 2^64. */
#define LIMB_TERMS 15
#else
#define LIMB_TERMS 7
#endif
typedef struct { u64 s0, s1; } limb_acc_t;

/* A scaled word as rns_conv_u64 holds it in registers: below 2^30 with XEHE_WORD32 (its packed
 * form is itself), so half the registers of a digit's window. */
#if XEHE_WORD32
typedef u32 limb_word_t;
#else
typedef u64 limb_word_t;
#endif

DECLSPEC u64 limb_pack(u64 y)
{
    return ((y >> 30) << 32) | (y & LIMB_MASK);
}

/* a + y b (mod m) in limb sums: y packed by limb_pack, b and bt = [b 2^30]_m packed likewise.
 * With XEHE_WORD32 every input and output prime is below 2^30, so y, b < 2^30 have no high
 * limb (their packed forms are themselves) and s1 stays 0: one product. */
DECLSPEC limb_acc_t limb_mad(limb_acc_t a, u64 y, u64 b, u64 bt)
{
#if XEHE_WORD32
    (void)bt;
    a.s0 = mad_wide32((u32)y, (u32)b, a.s0);
#else
    u32 y0 = (u32)y, y1 = (u32)(y >> 32);
    a.s0 = mad_wide32(y0, (u32)b, a.s0);
    a.s0 = mad_wide32(y1, (u32)bt, a.s0);
    a.s1 = mad_wide32(y0, (u32)(b >> 32), a.s1);
    a.s1 = mad_wide32(y1, (u32)(bt >> 32), a.s1);
#endif
    return a;
}

/*
 * (s0 + s1 2^30) mod m for s0, s1 below 2^64 - 2^35 (at most 15 products or residues below
 * 2^60). mu = floor(2^94 / m) for m > 2^30: the quotient estimate floor(top mu / 2^64), top =
 * floor(V / 2^30), is at most 3 below floor(V / m), so V - estimate m lies in [0, 4m) and is
 * computed in wrapping 64-bit words. mu = 0 marks m <= 2^30, where every packed constant's high
 * limb is 0, so s1 = 0 and SEAL's 64-bit Barrett reduction (r1 = floor(2^64 / m)) applies.
 */
DECLSPEC u64 limb_reduce(limb_acc_t a, u64 m, u64 mu, u64 r1)
{
#if XEHE_WORD32
    (void)mu;
    return barrett_reduce_64(a.s0, m, r1); /* s1 = 0, mu = 0: every prime below 2^30 */
#else
    u64 lo = a.s0 + (a.s1 << 30);
    if (mu == 0) return barrett_reduce_64(lo, m, r1);
    u64 r = lo - mulhi64(a.s1 + (a.s0 >> 30), mu) * m;
    r = r >= 2 * m ? r - 2 * m : r;
    return r >= m ? r - m : r;
#endif
}

/* A dot product's start: out_add (<= m) as the carried residue of the first group (which carries
 * none, so limb_reduce's bound holds), then the balanced digits' correction c * [-Q_j]_m as a
 * term (c <= the digit size, far below 2^30). */
DECLSPEC limb_acc_t limb_start(u64 oadd, u64 c, u64 nq)
{
    limb_acc_t a;
    a.s0 = oadd;
    a.s1 = 0;
    return limb_mad(a, c, nq, 0);
}

/* Term i (i >= 1 past the start) of a dot product: the sum reduced first every LIMB_TERMS terms. */
DECLSPEC limb_acc_t limb_term(limb_acc_t a, u32 i, u64 y, u64 b, u64 bt, u64 m, u64 mu, u64 r1)
{
    if (i % LIMB_TERMS == 0 && i > 0) {
        a.s0 = limb_reduce(a, m, mu, r1);
        a.s1 = 0;
    }
    return limb_mad(a, y, b, bt);
}

/* The output limb of digit j's u-th computed output: ModUp (skip) passes over the digit's own
 * limbs [first, first + cnt), which the caller holds exactly. */
DECLSPEC u32 rns_out_limb(u32 u, u32 first, u32 cnt, u32 skip)
{
    return skip && u >= first ? u + cnt : u;
}

/* Output limb o's row in out_a (o < split) or out_b for poly p, digit j (the layout of
 * rns_conv_u64's comment). */
DECLSPEC u64 rns_out_row(u32 p, u32 j, u32 o, u32 first, u32 split, u32 digits, u32 skip, u32 out_rows)
{
    return o < split ? ((u64)p * split + o) * (digits - skip) + (skip && o < first ? j - 1 : j)
                     : ((u64)p * (out_rows - split) + o - split) * digits + j;
}

/*
 * Scale step of fast base conversion for input row r (within its poly) at word i of the digit
 * starting at src: [(src[i] + add[r]) * w[r]]_{q_r} (w = qhat^{-1} within the row's digit,
 * Shoup quotient wq; add: ModDown's floor(P/2), 0 for ModUp).
 */
DECLSPEC u64 rns_scaled(CONST_AS DWORD *src, u32 i, u32 log_n, u32 r, CONST_AS u64 *moduli, CONST_AS u64 *add,
                        CONST_AS u64 *w, CONST_AS u64 *wq)
{
    u64 q = moduli[r];
    return mul_shoup(add_mod(src[(u64)i << log_n], add[r], q), w[r], wq[r], q);
}

/*
 * Fast base conversion, scale and convert in one launch (ModUp and ModDown). Input: polys × in_rows
 * canonical rows (coefficient form) in digits of d consecutive rows, the first one `off` rows
 * short (a composite level's window cuts the key's first digit at its start: its matrix and scale
 * constants are the whole digit's at the rows present, as if the missing rows were 0), the last
 * one possibly short: digit j holds rows [first_j, first_j + cnt_j), first_j = max(j*d - off, 0),
 * cnt_j = min((j+1)*d - off, in_rows) - first_j. Below, j*d + i stands for first_j + i. For poly p,
 * digit j < digits and output limb o < out_rows:
 *   v = ([sum_{i < cnt_j} y_i * b_{j,o,i}]_{m_o} + out_add[o]) mod m_o,
 *   y_i = [(x[p][j*d + i] + in_add[j*d + i]) * w[j*d + i]]_{q_{j*d+i}} (scaled in registers),
 * b_{j,o,i} = [qhat_i]_{m_o} given as the packed pair matrix[2e], matrix[2e + 1] (b and
 * [b 2^30]_{m_o}, e = (j*out_rows + o)*d + i), summed in 30-bit limbs (limb_mad) and reduced once
 * per LIMB_TERMS terms (limb_reduce, out_mu[o] = floor(2^94 / m_o) or 0, out_r1[o] =
 * floor(2^64 / m_o)); out_add[o] <= m_o (ModDown's m_o - [floor(P/2)]_{m_o}, 0 for ModUp).
 * With centered = 1 (balanced ModUp digits, src/ckks/hybrid.rs Digits::Balanced) each y_i is read
 * centred in (-q_i/2, q_i/2]: v -= c * [Q_j]_{m_o}, c = #{i : y_i > q_i/2}, as one more limb term
 * c * neg_q[j*out_rows + o] (neg_q = [-Q_j]_{m_o}, packed). With centered = 2 (ModDown fused
 * with the rescale, corrected to a rounding) c is instead round(sum_i y_i / q_i) in 24-bit fixed
 * point, (sum_i mulhi64(y_i, in_rinv[i]) + 2^23) >> 24 with in_rinv[i] = floor(2^88 / q_i) (the
 * CPU reference's BaseConverter::rounding_multiples, word for word). Every modulus is below 2^60
 * (SEAL's limit).
 *
 * skip = 1 (ModUp): the output base starts with the input rows, and a digit's own limbs
 * (o in [j*d, j*d + cnt_j)) are not computed (the caller holds them exactly, in NTT form).
 * Outputs are stored limb-major for the grouped NTT: limb o < split goes to row
 * (p*split + o)*(digits - skip) + jj of out_a (jj = j, less one past the skipped own digit:
 * j - 1 when o lies in an earlier digit), limb o >= split to row
 * (p*(out_rows - split) + o - split)*digits + j of out_b. ModDown: skip = 0, digits = 1,
 * split = out_rows, so out_a is polys × out_rows rows.
 *
 * One work-item per (poly, digit, chunk of `chunk` outputs, RNS_COEFS coefficients N/RNS_COEFS
 * apart): the chunk's outputs reuse the digit's scaled words from registers; more chunks raise
 * the parallelism of small conversions (ModDown: polys × N work-items only) for one extra scale
 * per chunk. A work-group's work-items share their (poly, digit, chunk), so the group stages
 * the chunk's matrix rows and per-output constants in local memory once (RNS_STAGE_OUTS
 * outputs at a time) and every work-item reads them with uint4 loads, where reading each entry
 * from global memory took an address computation and a load a term (BENCHMARKS.md has the
 * change's timings). Groups that span parts (tiny N) and digits wider than the register window
 * read the matrix from global memory.
 */
RNS_KERNEL rns_conv_u64(GLOBAL_AS DWORD *RESTRICT out_a, GLOBAL_AS DWORD *RESTRICT out_b, CONST_AS DWORD *RESTRICT x,
                            CONST_AS u64 *RESTRICT in_moduli, CONST_AS u64 *RESTRICT in_add, CONST_AS u64 *RESTRICT w,
                            CONST_AS u64 *RESTRICT wq, CONST_AS u64 *RESTRICT matrix, CONST_AS u64 *RESTRICT out_moduli,
                            CONST_AS u64 *RESTRICT out_mu, CONST_AS u64 *RESTRICT out_r1, CONST_AS u64 *RESTRICT out_add,
                            CONST_AS u64 *RESTRICT neg_q, CONST_AS u64 *RESTRICT in_rinv, u32 centered, u32 d, u32 off, u32 in_rows,
                            u32 digits, u32 out_rows, u32 split, u32 skip, u32 chunk, u32 chunks, u32 polys,
                            u32 log_n)
{
    u32 log_part = log_n - (RNS_COEFS == 4 ? 2 : RNS_COEFS == 2 ? 1 : 0);
    u32 part = 1u << log_part;
    u64 total = ((u64)polys * digits * chunks) << log_part;
    /* Staged outputs: a row of matrix words per output, and 12 words of constants (m, r1,
     * out_add, neg_q, mu, the output row with bit 31 for out_b). A work-group shares (p, j, c)
     * when it lies within one part (launch groups of LOCAL_SIZE() work-items, the grid a
     * multiple of them): then its barriers are uniform. Wider digits than the register window
     * read their matrix from global memory. */
    LOCAL_ARRAY(uint4, sb4, RNS_STAGE_OUTS * RNS_STAGE_ROW / 4);
    LOCAL_ARRAY(uint4, sc4, RNS_STAGE_OUTS * 3);
    u32 staged = (part % LOCAL_SIZE()) == 0 && d <= RNS_REG_DIGIT;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u32 xi = (u32)g & (part - 1);
        u32 rest = (u32)(g >> log_part);
        u32 c = rest % chunks, pj = rest / chunks;
        u32 j = pj % digits, p = pj / digits;
        u32 first = j ? j * d - off : 0;
        u32 end = (j + 1) * d - off;
        u32 cnt = (end < in_rows ? end : in_rows) - first;
        u32 others = skip ? out_rows - cnt : out_rows;
        u32 u0 = c * chunk;
        u32 u1 = u0 + chunk < others ? u0 + chunk : others;
        if (u0 >= u1) continue;
        CONST_AS DWORD *src = x + (((u64)p * in_rows + first) << log_n) + xi;
        /* Scaled words in limb form; balanced digits count the words read as negative. */
        limb_word_t yv[RNS_COEFS][RNS_REG_DIGIT];
        u64 neg[RNS_COEFS];
#pragma unroll
        for (u32 k = 0; k < RNS_COEFS; k++) {
            neg[k] = 0;
#pragma unroll
            for (u32 i = 0; i < RNS_REG_DIGIT; i++) {
                u64 y = i < cnt ? rns_scaled(src + k * part, i, log_n, first + i, in_moduli, in_add, w, wq) : 0;
                if (centered == 1 && i < cnt) neg[k] += y > (in_moduli[first + i] >> 1);
                if (centered == 2 && i < cnt) neg[k] += mulhi64(y, in_rinv[first + i]);
                yv[k][i] = (limb_word_t)limb_pack(y);
            }
            if (centered)
                for (u32 i = RNS_REG_DIGIT; i < cnt; i++) {
                    u64 y = rns_scaled(src + k * part, i, log_n, first + i, in_moduli, in_add, w, wq);
                    neg[k] += centered == 2 ? mulhi64(y, in_rinv[first + i]) : (u64)(y > (in_moduli[first + i] >> 1));
                }
            if (centered == 2) neg[k] = (neg[k] + (1u << 23)) >> 24;
        }
        if (staged) {
            LOCAL_AS u32 *sb = (LOCAL_AS u32 *)sb4;
            LOCAL_AS u32 *sc = (LOCAL_AS u32 *)sc4;
            for (u32 s0 = u0; s0 < u1; s0 += RNS_STAGE_OUTS) {
                u32 s1 = s0 + RNS_STAGE_OUTS < u1 ? s0 + RNS_STAGE_OUTS : u1;
                SYNC_THREADS(); /* the previous slab's readers are done */
                for (u32 t = LOCAL_ID(); t < (s1 - s0) * RNS_STAGE_ROW; t += LOCAL_SIZE()) {
                    u32 uu = t / RNS_STAGE_ROW, e = t % RNS_STAGE_ROW, i = e / RNS_TERM_WORDS, h = e % RNS_TERM_WORDS;
                    u32 u = s0 + uu;
                    u32 o = rns_out_limb(u, first, cnt, skip);
                    sb[t] = i < d ? (u32)(matrix[2 * (((u64)j * out_rows + o) * d + i) + h / 2] >> (32 * (h % 2))) : 0;
                    if (e == 0) {
                        u64 cv[5] = {out_moduli[o], out_r1[o], out_add[o], centered ? neg_q[(u64)j * out_rows + o] : 0, out_mu[o]};
                        for (u32 q = 0; q < 5; q++) {
                            sc[12 * uu + 2 * q] = (u32)cv[q];
                            sc[12 * uu + 2 * q + 1] = (u32)(cv[q] >> 32);
                        }
                        sc[12 * uu + 10] = (u32)rns_out_row(p, j, o, first, split, digits, skip, out_rows) | (o < split ? 0 : 1u << 31);
                    }
                }
                SYNC_THREADS();
                for (u32 u = s0; u < s1; u++) {
                    u32 uu = u - s0;
                    uint4 c0 = sc4[3 * uu], c1 = sc4[3 * uu + 1], c2 = sc4[3 * uu + 2];
                    u64 m = c0.x | (u64)c0.y << 32, r1 = c0.z | (u64)c0.w << 32, mu = c2.x | (u64)c2.y << 32;
                    u64 nq = c1.z | (u64)c1.w << 32;
                    GLOBAL_AS DWORD *dst = (c2.z >> 31 ? out_b : out_a) + ((u64)(c2.z & 0x7fffffffu) << log_n) + xi;
                    limb_acc_t la[RNS_COEFS];
#pragma unroll
                    for (u32 k = 0; k < RNS_COEFS; k++) la[k] = limb_start(c1.x | (u64)c1.y << 32, neg[k], nq);
#if XEHE_WORD32
                    u32 bw[RNS_STAGE_ROW];
#pragma unroll
                    for (u32 q = 0; q < RNS_STAGE_ROW / 4; q++) {
                        uint4 v = sb4[uu * (RNS_STAGE_ROW / 4) + q];
                        bw[4 * q] = v.x;
                        bw[4 * q + 1] = v.y;
                        bw[4 * q + 2] = v.z;
                        bw[4 * q + 3] = v.w;
                    }
#endif
#pragma unroll
                    for (u32 i = 0; i < RNS_REG_DIGIT; i++) {
#if XEHE_WORD32
                        u64 b = bw[i], bt = 0;
#else
                        uint4 v = sb4[uu * (RNS_STAGE_ROW / 4) + i];
                        u64 b = v.x | (u64)v.y << 32, bt = v.z | (u64)v.w << 32;
#endif
#pragma unroll
                        for (u32 k = 0; k < RNS_COEFS; k++) la[k] = limb_term(la[k], i, yv[k][i], b, bt, m, mu, r1);
                    }
#pragma unroll
                    for (u32 k = 0; k < RNS_COEFS; k++) dst[k * part] = (DWORD)limb_reduce(la[k], m, mu, r1);
                }
            }
            continue;
        }
        for (u32 u = u0; u < u1; u++) {
            u32 o = rns_out_limb(u, first, cnt, skip);
            CONST_AS u64 *mrow = matrix + 2 * (((u64)j * out_rows + o) * d);
            u64 m = out_moduli[o], mu = out_mu[o], r1 = out_r1[o];
            GLOBAL_AS DWORD *dst = (o < split ? out_a : out_b) + (rns_out_row(p, j, o, first, split, digits, skip, out_rows) << log_n) + xi;
            limb_acc_t la[RNS_COEFS];
#pragma unroll
            for (u32 k = 0; k < RNS_COEFS; k++) la[k] = limb_start(out_add[o], neg[k], centered ? neg_q[(u64)j * out_rows + o] : 0);
            /* A short last digit's missing words are 0 in yv, and its matrix rows are d wide. */
#pragma unroll
            for (u32 i = 0; i < RNS_REG_DIGIT; i++) {
                u64 b = mrow[2 * i], bt = mrow[2 * i + 1];
#pragma unroll
                for (u32 k = 0; k < RNS_COEFS; k++) la[k] = limb_term(la[k], i, yv[k][i], b, bt, m, mu, r1);
            }
            for (u32 i = RNS_REG_DIGIT; i < cnt; i++) {
                u64 b = mrow[2 * i], bt = mrow[2 * i + 1];
                for (u32 k = 0; k < RNS_COEFS; k++) {
                    u64 y = limb_pack(rns_scaled(src + k * part, i, log_n, first + i, in_moduli, in_add, w, wq));
                    la[k] = limb_term(la[k], i, y, b, bt, m, mu, r1);
                }
            }
#pragma unroll
            for (u32 k = 0; k < RNS_COEFS; k++) dst[k * part] = (DWORD)limb_reduce(la[k], m, mu, r1);
        }
    }
}
