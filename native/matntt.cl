/*
 * matntt.cl — the negacyclic NTT (forward and inverse) as two matrix products (Eq. 9 of
 * Fan, Wang, Xu, Hou, Meng, Zhang, "TensorFHE: Achieving Practical Computation on Encrypted Data
 * Using GPGPU", HPCA 2023;
 * formulas, the bit-reversal folding and the slicing scheme in src/device/ntt_family/matrix.rs; host
 * side src/device/ntt_family/matntt.rs). Only the NTT family (src/device/ntt_family) uses it.
 *
 * Layout: `data` is rows of N = N1·N2 u64 words, each an N1 × N2 row-major matrix; row r uses
 * prime p = (r / XEHE_ROWS_PER_PRIME) % k. Forward: stage 1 (fwd1) writes C = (W1·a) ⊙ W2 to a
 * scratch buffer of the same shape; stage 2 (fwd2) writes C·W3 back over the data: SEAL's
 * bit-reversed output order, canonical values, bit-identical to the CPU NTT. Inverse: inv1
 * writes E = (x·V3) ⊙ V2, inv2 writes V1·E (N^{-1} folded into V1).
 * Every stage is one GEMM of an N1 × N2 result with the twiddle on the left (inner dimension
 * N1) or on the right (inner dimension N2), with or without the Hadamard product: the mode bits
 * MATNTT_TW_LEFT and MATNTT_HADAMARD of one generic body.
 * Tables of prime p: w1 [p][N1][N1], w2 [p][N1][N2], w3 [p][N2][N2] (u64 words < q; V1..V3 alike);
 * consts [p][MATNTT_CONSTS] = q, r0, r1 (SEAL's floor(2^128/q)), then 2^(8u) mod q, u < 15.
 *
 * Two kinds:
 * - CUDA cores (portable: CUDA and OpenCL): each work-group computes a 32 × 32 output tile with
 *   16 × 16 work-items (2 × 2 outputs each), the twiddle and data tiles staged in local memory
 *   MATNTT_TK words of the inner dimension at a time; each output is one dot product with
 *   128-bit multiply-add accumulation and one Barrett reduction.
 * - Tensor cores (CUDA only, sm_80+): words cut into MATNTT_SLICES bytes (4 for q < 2^32, 8 for
 *   any q); each 16 × 8 output fragment of a warp accumulates the S² u8 products
 *   mma.m16n8k32.u8.u8.s32 grouped by slice-sum u = s + t in 2S − 1 s32 accumulators; the
 *   epilogue recombines Σ_u P_u·(2^(8u) mod q) in 128 bits and reduces once. Twiddles come
 *   pre-sliced from the host as u32 words of 4 consecutive inner-dimension bytes:
 *   ws [p][slice][outer][K/4] (outer = row of a left twiddle W1/V1, column of a right one
 *   W3/V3). Work-group tiles of 32·MATNTT_FM × 32·MATNTT_FN outputs; where the tile is the
 *   whole matrix (N ≤ 2^12), matntt_tc_fused_{fwd,inv} run both stages in one work-group per
 *   row with the intermediate kept in local memory as byte slices (MATNTT_FUSE=1).
 * The tensor-core code also compiles on OpenCL under MATNTT_MMA_EMULATE=1 (tests only), with
 * each mma emulated through local memory over the PTX fragment layout.
 */
#include "modarith.h"

#ifndef XEHE_ROWS_PER_PRIME
#define XEHE_ROWS_PER_PRIME 1
#endif
#define MATNTT_PRIME(row) ((u32)(((row) / XEHE_ROWS_PER_PRIME) % k))
#define MATNTT_CONSTS 18
/* Output tile edge of a work-group (both kinds). */
#define MATNTT_BT 32
/* Inner-dimension step of the CUDA-core kernel. */
#define MATNTT_TK 16

/* Stage modes. MATNTT_TW_LEFT: L = twiddle (N1 × N1), R = data (K = N1); else L = data, R =
 * twiddle (N2 × N2, K = N2). Strides: L rows K words, R rows N2 words. MATNTT_HADAMARD: the
 * reduced product is multiplied by the N1 × N2 table `had` (W2 / V2). */
#define MATNTT_TW_LEFT 1
#define MATNTT_HADAMARD 2
#define MATNTT_K(mode, n1, n2) (((mode) & MATNTT_TW_LEFT) ? (n1) : (n2))

/* The bm × bn output tile of this work-group: (first row, first column) of the N1 × N2 result. */
DECLSPEC void matntt_tile(u32 log_n2, u32 bm, u32 bn, u32 *i0, u32 *j0)
{
    u32 tiles_j = (1u << log_n2) / bn;
    *i0 = (GROUP_ID() / tiles_j) * bm;
    *j0 = (GROUP_ID() % tiles_j) * bn;
}

/* One output word: `acc` reduced, and with MATNTT_HADAMARD multiplied by had[i][j]. */
DECLSPEC u64 matntt_finish(u128_t acc, CONST_AS u64 *had, CONST_AS u64 *c, u64 had_off, u32 i, u32 j, u32 log_n2,
                           const int mode)
{
    u64 q = c[0], r0 = c[1], r1 = c[2];
    u64 v = barrett_reduce_128(acc, q, r0, r1);
    if (mode & MATNTT_HADAMARD)
        v = mul_mod(v, had[had_off + ((u64)i << log_n2) + j], q, r0, r1);
    return v;
}

/*
 * CUDA-core stage: out = (L·R) mod q [⊙ had] for the 32 × 32 tile of this work-group and row
 * GROUP_ID_Y(). Work-item (tx, ty) owns rows i0 + ty + 16a and columns j0 + tx + 16b, a, b < 2.
 */
DECLSPEC_INLINE void matntt_cc_stage(GLOBAL_AS u64 *out, CONST_AS u64 *in, CONST_AS u64 *w, CONST_AS u64 *w2,
                                     CONST_AS u64 *consts, u32 k, u32 log_n1, u32 log_n2, LOCAL_AS u64 *ls,
                                     LOCAL_AS u64 *rs, const int mode)
{
    u32 n1 = 1u << log_n1, n2 = 1u << log_n2;
    u32 kk = MATNTT_K(mode, n1, n2);
    u64 row = GROUP_ID_Y();
    u32 p = MATNTT_PRIME(row);
    u64 row_off = row << (log_n1 + log_n2);
    CONST_AS u64 *l = (mode & MATNTT_TW_LEFT) ? w + (u64)p * n1 * n1 : in + row_off;
    CONST_AS u64 *r = (mode & MATNTT_TW_LEFT) ? in + row_off : w + (u64)p * n2 * n2;
    u32 i0, j0;
    matntt_tile(log_n2, MATNTT_BT, MATNTT_BT, &i0, &j0);
    u32 lid = LOCAL_ID(), tx = lid % 16, ty = lid / 16;
    u128_t acc[2][2];
    for (u32 a = 0; a < 2; a++)
        for (u32 b = 0; b < 2; b++)
            acc[a][b].lo = acc[a][b].hi = 0;
    for (u32 t0 = 0; t0 < kk; t0 += MATNTT_TK) {
        /* L tile 32 × TK and R tile TK × 32: two words each per work-item. */
        for (u32 e = lid; e < MATNTT_BT * MATNTT_TK; e += 256) {
            ls[e] = l[(u64)(i0 + e / MATNTT_TK) * kk + t0 + e % MATNTT_TK];
            rs[e] = r[(u64)(t0 + e / MATNTT_BT) * n2 + j0 + e % MATNTT_BT];
        }
        SYNC_THREADS();
        for (u32 t = 0; t < MATNTT_TK; t++) {
            u64 l0 = ls[ty * MATNTT_TK + t], l1 = ls[(ty + 16) * MATNTT_TK + t];
            u64 r0 = rs[t * MATNTT_BT + tx], r1 = rs[t * MATNTT_BT + tx + 16];
            acc[0][0] = mad64_wide(l0, r0, acc[0][0]);
            acc[0][1] = mad64_wide(l0, r1, acc[0][1]);
            acc[1][0] = mad64_wide(l1, r0, acc[1][0]);
            acc[1][1] = mad64_wide(l1, r1, acc[1][1]);
        }
        SYNC_THREADS();
    }
    CONST_AS u64 *c = consts + (u64)p * MATNTT_CONSTS;
    u64 w2_off = (u64)p << (log_n1 + log_n2);
    for (u32 a = 0; a < 2; a++)
        for (u32 b = 0; b < 2; b++)
        {
            u32 i = i0 + ty + 16 * a, j = j0 + tx + 16 * b;
            out[row_off + ((u64)i << log_n2) + j] = matntt_finish(acc[a][b], w2, c, w2_off, i, j, log_n2, mode);
        }
}

/* The four stages of one kind from its generic body: fwd1 = (W1·a) ⊙ W2, fwd2 = C·W3,
 * inv1 = (x·V3) ⊙ V2, inv2 = V1·E. `w`: the stage's GEMM twiddle, `had`: W2 / V2.
 * Geometry: (tiles of the N1 × N2 result, rows) groups of 256. */
#define MATNTT_STAGES(kind, wtype, locals, body)                                                \
    MATNTT_STAGE(kind, fwd1, MATNTT_TW_LEFT | MATNTT_HADAMARD, wtype, locals, body)             \
    MATNTT_STAGE(kind, fwd2, 0, wtype, locals, body)                                            \
    MATNTT_STAGE(kind, inv1, MATNTT_HADAMARD, wtype, locals, body)                              \
    MATNTT_STAGE(kind, inv2, MATNTT_TW_LEFT, wtype, locals, body)
#define MATNTT_STAGE(kind, name, mode, wtype, locals, body)                                     \
    KERNEL_FQ void matntt_##kind##_##name##_u64(GLOBAL_AS u64 *out, CONST_AS u64 *in, CONST_AS wtype *w,  \
                                                CONST_AS u64 *had, CONST_AS u64 *consts, u32 k, u32 log_n1, \
                                                u32 log_n2)                                     \
    {                                                                                           \
        locals;                                                                                 \
        body(out, in, w, had, consts, k, log_n1, log_n2, mode);                                 \
    }

#define MATNTT_CC_LOCALS                                                                        \
    LOCAL_ARRAY(u64, ls, MATNTT_BT * MATNTT_TK);                                                \
    LOCAL_ARRAY(u64, rs, MATNTT_BT * MATNTT_TK)
#define MATNTT_CC_BODY(out, in, w, had, consts, k, log_n1, log_n2, mode)                        \
    matntt_cc_stage(out, in, w, had, consts, k, log_n1, log_n2, ls, rs, mode)
MATNTT_STAGES(cc, u64, MATNTT_CC_LOCALS, MATNTT_CC_BODY)

/* MATNTT_MMA_EMULATE=1 (tests only, any backend): the tensor-core kernels with each mma.sync
 * replaced by a local-memory exchange of the warp's fragments and scalar u8 dot products over
 * the fragment layout of the PTX ISA — checks the kernels' tiling and fragment indexing where no
 * tensor core exists. The host never sets it outside tests. */
#ifndef MATNTT_MMA_EMULATE
#define MATNTT_MMA_EMULATE 0
#endif
#ifndef MATNTT_FUSE
#define MATNTT_FUSE 0
#endif

#if IS_CUDA || MATNTT_MMA_EMULATE
/* ---- Tensor cores (CUDA only; the host refuses below sm_80 and on OpenCL). ---- */
#ifndef MATNTT_SLICES
#define MATNTT_SLICES 4
#endif
/* Fragments (16 × 8 each) per warp in m and n; 8 warps as 2 (m) × 4 (n), so a work-group's
 * tile is MATNTT_BM × MATNTT_BN. The host picks them (larger tiles slice each data word for
 * more outputs; 8 slices keep FM = 1 for the accumulators' registers). */
#ifndef MATNTT_FM
#define MATNTT_FM 1
#endif
#ifndef MATNTT_FN
#define MATNTT_FN 1
#endif
#define MATNTT_BM (32 * MATNTT_FM)
#define MATNTT_BN (32 * MATNTT_FN)
#define MATNTT_GROUPS (2 * MATNTT_SLICES - 1)
/* u32 words per row of a shared slice tile: 8 (32 inner-dimension bytes) + 4 padding, so the
 * fragment loads (row 8g' + t') of a warp hit 32 distinct banks. */
#define MATNTT_TC_ROW 12
#define MATNTT_TILE_A (MATNTT_BM * MATNTT_TC_ROW)
#define MATNTT_TILE_B (MATNTT_BN * MATNTT_TC_ROW)
/* Local words of the emulated mma's fragment exchange: 6 u32 per work-item. */
#define MATNTT_XCHG (MATNTT_MMA_EMULATE ? 6 * 256 : 1)

#if !MATNTT_MMA_EMULATE
/* D += A·B, A 16 × 32 u8 (row), B 32 × 8 u8 (col), D 16 × 8 s32 (PTX ISA, mma.m16n8k32). */
DECLSPEC void matntt_mma_u8(u32 *d, const u32 *a, const u32 *b, LOCAL_AS u32 *xchg)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
#else
/* The same operation, emulated: lane 4g + t holds A rows g, g+8 × k 4t..4t+3, 16+4t..16+4t+3
 * (registers 0..3: (row ≥ 8) + 2·(k ≥ 16)), B column g × the same k (registers 0, 1), and
 * D rows g, g+8 × columns 2t, 2t+1; bytes low to high in k. */
DECLSPEC void matntt_mma_u8(u32 *d, const u32 *a, const u32 *b, LOCAL_AS u32 *xchg)
{
    u32 lid = LOCAL_ID(), lane = lid % 32, g = lane >> 2, t = lane & 3;
    LOCAL_AS u32 *w = xchg + (lid / 32) * 32 * 6;
    SYNC_THREADS();
    for (u32 i = 0; i < 4; i++)
        w[lane * 6 + i] = a[i];
    w[lane * 6 + 4] = b[0];
    w[lane * 6 + 5] = b[1];
    SYNC_THREADS();
    for (u32 e = 0; e < 4; e++) {
        u32 row = g + 8 * (e >> 1), col = 2 * t + (e & 1), sum = 0;
        for (u32 kx = 0; kx < 32; kx++) {
            u32 ak = w[(4 * (row % 8) + (kx % 16) / 4) * 6 + (row >= 8) + 2 * (kx >= 16)];
            u32 bk = w[(4 * col + (kx % 16) / 4) * 6 + 4 + (kx >= 16)];
            sum += ((ak >> (8 * (kx % 4))) & 0xff) * ((bk >> (8 * (kx % 4))) & 0xff);
        }
        d[e] += sum;
    }
}
#endif

/* CUDA's __byte_perm (PRMT): byte i of the result is byte sel[4i+2:4i] of y:x (x bytes 0..3,
 * y bytes 4..7); the same in portable C elsewhere, so the emulated tests run this path too. */
DECLSPEC u32 matntt_byte_perm(u32 x, u32 y, u32 sel)
{
#if IS_CUDA
    return __byte_perm(x, y, sel);
#else
    u64 yx = ((u64)y << 32) | x;
    u32 r = 0;
    for (u32 i = 0; i < 4; i++)
        r |= (u32)((yx >> (8 * ((sel >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
#endif
}

/* Byte s of 4 words, packed low to high: one u32 of a slice tile (4 consecutive inner indices),
 * by three byte permutes of the words' halves. */
DECLSPEC u32 matntt_pack(const u64 *x, u32 s)
{
    u32 sh = 32 * (s / 4), sel = (s % 4) | ((s % 4 + 4) << 4);
    u32 lo = matntt_byte_perm((u32)(x[0] >> sh), (u32)(x[1] >> sh), sel);
    u32 hi = matntt_byte_perm((u32)(x[2] >> sh), (u32)(x[3] >> sh), sel);
    return matntt_byte_perm(lo, hi, 0x5410);
}

/* A data tile of `count` rows/columns × 32 inner indices, sliced into `tile`: `strided` (data
 * as B: column j0 + o, inner index = data row, coalesced over o) or not (data as A: row i0 + o,
 * inner index = data column). */
DECLSPEC void matntt_load_data(LOCAL_AS u32 *tile, CONST_AS u64 *in, u32 o0, u32 t0, u32 n2, u32 count,
                               const int strided)
{
    for (u32 e = LOCAL_ID(); e < count * 8; e += 256) {
        u32 o = strided ? e % count : e / 8, kq = strided ? e / count : e % 8;
        u64 x[4];
#pragma unroll
        for (u32 b = 0; b < 4; b++)
            x[b] = strided ? in[(u64)(t0 + 4 * kq + b) * n2 + o0 + o] : in[(u64)(o0 + o) * n2 + t0 + 4 * kq + b];
        u32 stride = count * MATNTT_TC_ROW;
#pragma unroll
        for (u32 s = 0; s < MATNTT_SLICES; s++)
            tile[s * stride + o * MATNTT_TC_ROW + kq] = matntt_pack(x, s);
    }
}

/* A pre-sliced twiddle tile (outer indices o0..o0+count−1, inner t0..t0+31) into `tile`. */
DECLSPEC void matntt_load_sliced(LOCAL_AS u32 *tile, CONST_AS u32 *ws, u32 outer, u32 kk, u32 o0, u32 t0,
                                 u32 count)
{
    for (u32 e = LOCAL_ID(); e < count * 8; e += 256) {
        u32 o = e / 8, kq = e % 8;
#pragma unroll
        for (u32 s = 0; s < MATNTT_SLICES; s++)
            tile[s * count * MATNTT_TC_ROW + o * MATNTT_TC_ROW + kq] =
                ws[((u64)s * outer + o0 + o) * (kk / 4) + t0 / 4 + kq];
    }
}

/* Accumulators of a work-item: FM × FN fragments × slice-sum groups × 4 elements. */
#define MATNTT_ACC(name) u32 name[MATNTT_FM][MATNTT_FN][MATNTT_GROUPS][4]

DECLSPEC void matntt_tc_zero(MATNTT_ACC(acc))
{
#pragma unroll
    for (u32 mi = 0; mi < MATNTT_FM; mi++)
#pragma unroll
        for (u32 ni = 0; ni < MATNTT_FN; ni++)
#pragma unroll
            for (u32 u = 0; u < MATNTT_GROUPS; u++)
                acc[mi][ni][u][0] = acc[mi][ni][u][1] = acc[mi][ni][u][2] = acc[mi][ni][u][3] = 0;
}

/*
 * The GEMM of one stage over the MATNTT_BM × MATNTT_BN output tile at (i0, j0), into `acc`:
 * 8 warps, warp w owning FM × FN fragments of 16 × 8 from row 16·FM·(w/4), column 8·FN·(w%4).
 * Twiddle on the left: A = twiddle (pre-sliced by row), B = data; on the right: A = data,
 * B = twiddle (pre-sliced by column). The data operand is sliced on load from `in` (this row),
 * or with `planes` read from `cpl`, already sliced in local memory as [slice][outer][kk/4 + 4]
 * u32 (the fused kernel's second stage, whose tile is the whole matrix).
 */
DECLSPEC_INLINE void matntt_tc_gemm(MATNTT_ACC(acc), CONST_AS u64 *in, CONST_AS u32 *wp, u32 kk, u32 outer, u32 n2,
                                    u32 i0, u32 j0, LOCAL_AS u32 *as, LOCAL_AS u32 *bs, LOCAL_AS u32 *xchg,
                                    LOCAL_AS u32 *cpl, const int planes, const int mode)
{
    u32 lid = LOCAL_ID(), warp = lid / 32, lane = lid % 32, g = lane >> 2, t = lane & 3;
    u32 fm = 16 * MATNTT_FM * (warp / 4), fn = 8 * MATNTT_FN * (warp % 4);
    u32 crow = kk / 4 + 4;
    for (u32 t0 = 0; t0 < kk; t0 += 32) {
        /* Operand tiles: base, u32 words per row, word offset of this k-step. */
        LOCAL_AS u32 *abase = as;
        LOCAL_AS u32 *bbase = bs;
        u32 arow = MATNTT_TC_ROW, brow = MATNTT_TC_ROW, aoff = 0, boff = 0;
        if (mode & MATNTT_TW_LEFT) {
            matntt_load_sliced(as, wp, outer, kk, i0, t0, MATNTT_BM);
            if (planes) {
                bbase = cpl;
                brow = crow;
                boff = t0 / 4;
            } else {
                matntt_load_data(bs, in, j0, t0, n2, MATNTT_BN, 1);
            }
        } else {
            if (planes) {
                abase = cpl;
                arow = crow;
                aoff = t0 / 4;
            } else {
                matntt_load_data(as, in, i0, t0, n2, MATNTT_BM, 0);
            }
            matntt_load_sliced(bs, wp, outer, kk, j0, t0, MATNTT_BN);
        }
        SYNC_THREADS();
#pragma unroll
        for (u32 sa = 0; sa < MATNTT_SLICES; sa++) {
            u32 fa[MATNTT_FM][4];
#pragma unroll
            for (u32 mi = 0; mi < MATNTT_FM; mi++) {
                LOCAL_AS u32 *at = abase + sa * arow * MATNTT_BM + (fm + 16 * mi + g) * arow + aoff + t;
                fa[mi][0] = at[0];
                fa[mi][1] = at[8 * arow];
                fa[mi][2] = at[4];
                fa[mi][3] = at[8 * arow + 4];
            }
#pragma unroll
            for (u32 sb = 0; sb < MATNTT_SLICES; sb++) {
#pragma unroll
                for (u32 ni = 0; ni < MATNTT_FN; ni++) {
                    LOCAL_AS u32 *bt = bbase + sb * brow * MATNTT_BN + (fn + 8 * ni + g) * brow + boff + t;
                    u32 fb[2];
                    fb[0] = bt[0];
                    fb[1] = bt[4];
#pragma unroll
                    for (u32 mi = 0; mi < MATNTT_FM; mi++)
                        matntt_mma_u8(acc[mi][ni][sa + sb], fa[mi], fb, xchg);
                }
            }
        }
        SYNC_THREADS();
    }
}

#if IS_CUDA
typedef unsigned char matntt_u8;
#else
typedef uchar matntt_u8;
#endif

/*
 * The epilogue: fragment element e of a work-item is row g (+8 for e ≥ 2), column 2t + (e & 1);
 * the slice-sum groups recombine as Σ_u P_u·(2^(8u) mod q) in 128 bits, reduce once (and take
 * the Hadamard product). Written to `out` (this row), or with `planes` as bytes into `cpl`
 * ([slice][outer][crow] u32, plane stride `plane` words) at outer = i, index j for a
 * twiddle-left stage, outer = j, index i otherwise — the layout the next stage reads.
 */
DECLSPEC_INLINE void matntt_tc_epilogue(MATNTT_ACC(acc), GLOBAL_AS u64 *out, CONST_AS u64 *had, CONST_AS u64 *c,
                                        u64 had_off, u32 i0, u32 j0, u32 log_n2, LOCAL_AS u32 *cpl, u32 crow,
                                        u32 plane, const int planes, const int mode)
{
    u32 lid = LOCAL_ID(), warp = lid / 32, lane = lid % 32, g = lane >> 2, t = lane & 3;
    u32 fm = 16 * MATNTT_FM * (warp / 4), fn = 8 * MATNTT_FN * (warp % 4);
    LOCAL_AS matntt_u8 *bytes = (LOCAL_AS matntt_u8 *)cpl;
#pragma unroll
    for (u32 mi = 0; mi < MATNTT_FM; mi++)
#pragma unroll
        for (u32 ni = 0; ni < MATNTT_FN; ni++)
#pragma unroll
            for (u32 e = 0; e < 4; e++) {
                u128_t v;
                v.lo = v.hi = 0;
#pragma unroll
                for (u32 u = 0; u < MATNTT_GROUPS; u++)
                    v = mad64_wide((u64)acc[mi][ni][u][e], c[3 + u], v);
                u32 i = i0 + fm + 16 * mi + g + 8 * (e >> 1), j = j0 + fn + 8 * ni + 2 * t + (e & 1);
                u64 w = matntt_finish(v, had, c, had_off, i, j, log_n2, mode);
                if (planes) {
                    u32 o = (mode & MATNTT_TW_LEFT) ? i : j, x = (mode & MATNTT_TW_LEFT) ? j : i;
#pragma unroll
                    for (u32 s = 0; s < MATNTT_SLICES; s++)
                        bytes[4 * (s * plane + o * crow) + x] = (matntt_u8)(w >> (8 * s));
                } else {
                    out[((u64)i << log_n2) + j] = w;
                }
            }
}

/* One stage on tensor cores (fwd1, fwd2, inv1, inv2): the GEMM of this work-group's tile of
 * row GROUP_ID_Y(), then the epilogue to `out`. */
DECLSPEC_INLINE void matntt_tc_stage(GLOBAL_AS u64 *out, CONST_AS u64 *in, CONST_AS u32 *ws, CONST_AS u64 *had,
                                     CONST_AS u64 *consts, u32 k, u32 log_n1, u32 log_n2, LOCAL_AS u32 *as,
                                     LOCAL_AS u32 *bs, LOCAL_AS u32 *xchg, const int mode)
{
    u32 n1 = 1u << log_n1, n2 = 1u << log_n2;
    u32 kk = MATNTT_K(mode, n1, n2);
    u64 row = GROUP_ID_Y();
    u32 p = MATNTT_PRIME(row);
    u64 row_off = row << (log_n1 + log_n2);
    u32 outer = (mode & MATNTT_TW_LEFT) ? n1 : n2;
    u32 i0, j0;
    matntt_tile(log_n2, MATNTT_BM, MATNTT_BN, &i0, &j0);
    MATNTT_ACC(acc);
    matntt_tc_zero(acc);
    matntt_tc_gemm(acc, in + row_off, ws + (u64)p * MATNTT_SLICES * outer * (kk / 4), kk, outer, n2, i0, j0, as, bs,
                   xchg, as, 0, mode);
    matntt_tc_epilogue(acc, out + row_off, had, consts + (u64)p * MATNTT_CONSTS, (u64)p << (log_n1 + log_n2), i0,
                       j0, log_n2, as, 0, 0, 0, mode);
}

/*
 * Both stages of one direction in one work-group per row, when the tile is the whole N1 × N2
 * matrix (MATNTT_BM = N1, MATNTT_BN = N2): the intermediate (C or E) stays in local memory as
 * byte slices, the data is read once and overwritten in place (no scratch buffer).
 * ws1 / ws2: the first and second stage's sliced twiddles; had: W2 / V2.
 */
DECLSPEC_INLINE void matntt_tc_fused(GLOBAL_AS u64 *data, CONST_AS u32 *ws1, CONST_AS u32 *ws2, CONST_AS u64 *had,
                                     CONST_AS u64 *consts, u32 k, u32 log_n1, u32 log_n2, LOCAL_AS u32 *as,
                                     LOCAL_AS u32 *bs, LOCAL_AS u32 *xchg, LOCAL_AS u32 *cpl, const int fwd)
{
    const int mode1 = fwd ? MATNTT_TW_LEFT | MATNTT_HADAMARD : MATNTT_HADAMARD;
    const int mode2 = fwd ? 0 : MATNTT_TW_LEFT;
    u32 n1 = 1u << log_n1, n2 = 1u << log_n2;
    u64 row = GROUP_ID_Y();
    u32 p = MATNTT_PRIME(row);
    GLOBAL_AS u64 *x = data + (row << (log_n1 + log_n2));
    CONST_AS u64 *c = consts + (u64)p * MATNTT_CONSTS;
    u32 kk1 = MATNTT_K(mode1, n1, n2), outer1 = fwd ? n1 : n2;
    u32 kk2 = MATNTT_K(mode2, n1, n2), outer2 = fwd ? n2 : n1;
    /* The intermediate as the second stage's data operand: outer2' × kk2 bytes per slice. */
    u32 crow = kk2 / 4 + 4, plane = crow * (fwd ? n1 : n2);
    MATNTT_ACC(acc);
    matntt_tc_zero(acc);
    matntt_tc_gemm(acc, x, ws1 + (u64)p * MATNTT_SLICES * outer1 * (kk1 / 4), kk1, outer1, n2, 0, 0, as, bs, xchg,
                   cpl, 0, mode1);
    matntt_tc_epilogue(acc, x, had, c, (u64)p << (log_n1 + log_n2), 0, 0, log_n2, cpl, crow, plane, 1, mode1);
    SYNC_THREADS();
    matntt_tc_zero(acc);
    matntt_tc_gemm(acc, x, ws2 + (u64)p * MATNTT_SLICES * outer2 * (kk2 / 4), kk2, outer2, n2, 0, 0, as, bs, xchg,
                   cpl, 1, mode2);
    matntt_tc_epilogue(acc, x, had, c, 0, 0, 0, log_n2, cpl, 0, 0, 0, mode2);
}

/* The tensor-core kernels' local memory: A and B slice tiles, the emulation's exchange. */
#define MATNTT_TC_LOCALS                                                                        \
    LOCAL_ARRAY(u32, as, MATNTT_SLICES * MATNTT_TILE_A);                                        \
    LOCAL_ARRAY(u32, bs, MATNTT_SLICES * MATNTT_TILE_B);                                        \
    LOCAL_ARRAY(u32, xchg, MATNTT_XCHG)
#define MATNTT_TC_BODY(out, in, w, had, consts, k, log_n1, log_n2, mode)                        \
    matntt_tc_stage(out, in, w, had, consts, k, log_n1, log_n2, as, bs, xchg, mode)
/* Geometry: (N1/MATNTT_BM · N2/MATNTT_BN, rows) groups of 256. */
MATNTT_STAGES(tc, u32, MATNTT_TC_LOCALS, MATNTT_TC_BODY)

#if MATNTT_FUSE
/* (Compiled only with MATNTT_FUSE=1: the host sets it for fused launches, whose tile is the
 * whole matrix and whose local memory fits 48 KiB.)
 * The fused kernels' intermediate: MATNTT_SLICES planes of max(BM, BN) rows of
 * max(BM, BN)/4 + 4 u32 words. */
#define MATNTT_BMAX (MATNTT_BM > MATNTT_BN ? MATNTT_BM : MATNTT_BN)
#define MATNTT_CPL (MATNTT_SLICES * MATNTT_BMAX * (MATNTT_BMAX / 4 + 4))
#define MATNTT_FUSED(name, fwd)                                                                 \
    KERNEL_FQ void name(GLOBAL_AS u64 *data, CONST_AS u32 *ws1, CONST_AS u32 *ws2, CONST_AS u64 *had,   \
                        CONST_AS u64 *consts, u32 k, u32 log_n1, u32 log_n2)                    \
    {                                                                                           \
        MATNTT_TC_LOCALS;                                                                       \
        LOCAL_ARRAY(u32, cpl, MATNTT_CPL);                                                      \
        matntt_tc_fused(data, ws1, ws2, had, consts, k, log_n1, log_n2, as, bs, xchg, cpl, fwd);  \
    }
/* Geometry: (1, rows) groups of 256; only when MATNTT_BM × MATNTT_BN = N1 × N2. */
MATNTT_FUSED(matntt_tc_fused_fwd_u64, 1)
MATNTT_FUSED(matntt_tc_fused_inv_u64, 0)
#endif /* MATNTT_FUSE */
#endif /* IS_CUDA || MATNTT_MMA_EMULATE */
