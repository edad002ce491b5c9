/*
 * word.h — the storage word of polynomial data: rows of residues (ciphertexts, plaintexts,
 * keys and the temporaries that hold such rows), not the constant tables, which stay u64.
 *
 * XEHE_WORD32=1: a word-size chain (every prime below 2^30, so every residue and every lazy
 * value below 4q fits 32 bits) keeps each residue in a u32: element e of a buffer is u32 word
 * e, so kernels index exactly as in the 64-bit layout and read and write half the bytes.
 * Values live in u64 registers (a word read is widened, a result stored is narrowed); the
 * products take modarith.h's 32-bit paths, whose canonical results are the 64-bit
 * arithmetic's, so every result equals the 64-bit layout's word for word. Without it DWORD is
 * u64 and every kernel is the 64-bit one, unchanged.
 *
 * Kernels declare data pointers as `GLOBAL_AS DWORD *` / `CONST_AS DWORD *`; pairs of
 * consecutive words (16- or 8-byte accesses) go through DWORD2 with dpair_widen / dpair_narrow.
 */
#ifndef XEHE_WORD_H
#define XEHE_WORD_H

#ifndef XEHE_WORD32
#define XEHE_WORD32 0
#endif

#if IS_CUDA
typedef ulonglong2 u64x2;
#else
typedef ulong2 u64x2;
#endif

#if XEHE_WORD32
typedef u32 DWORD;
typedef uint2 DWORD2;
#else
typedef u64 DWORD;
typedef u64x2 DWORD2;
#endif

/* A pair of data words in u64 registers. */
DECLSPEC u64x2 dpair_widen(DWORD2 v)
{
    u64x2 r;
    r.x = v.x;
    r.y = v.y;
    return r;
}

/* A pair of u64 values (below 2^32 with XEHE_WORD32) as data words. */
DECLSPEC DWORD2 dpair_narrow(u64x2 v)
{
    DWORD2 r;
    r.x = (DWORD)v.x;
    r.y = (DWORD)v.y;
    return r;
}

#endif /* XEHE_WORD_H */
