/*
 * modarith.h — the arithmetic core every kernel shares (paper §V-A): add_mod, sub_mod,
 * Barrett mul_mod (SEAL's 128-bit Barrett with const_ratio), Shoup multiplication by a
 * precomputed operand, and mad_mod (multiply-add with a single reduction, §V-A1).
 * All functions return canonical values in [0, q) unless named *_lazy.
 *
 * Vendor fast path: on CUDA (unless XEHE_NO_ASM) the 128-bit multiply-accumulate uses PTX
 * carry-chain instructions (mad.lo.cc / madc.hi), the counterpart of the paper's inline vISA
 * add_mod/mul64 (§V-A2).
 */
#ifndef XEHE_MODARITH_H
#define XEHE_MODARITH_H
#include "portable.h"
#include "word.h"

/* XEHE_NO_MAD=1: reduce after every product instead of once per multiply-add chain (ablation
 * of mad_mod, paper §V-A1). */
#ifndef XEHE_NO_MAD
#define XEHE_NO_MAD 0
#endif

typedef struct { u64 lo, hi; } u128_t;

/* 2^32 as a 64-bit word. */
#define ONE_32 ((u64)1 << 32)

/* x * w mod q in [0, 2q) for any 32-bit x, w < q < 2^31, wq32 = floor(w * 2^32 / q) (Shoup,
 * Harvey, 32-bit words): one low and one high 32x32 product, one low product by q. */
DECLSPEC u32 shoup32_lazy(u32 x, u32 w, u32 wq32, u32 q)
{
    return x * w - mulhi32(x, wq32) * q;
}

/*
 * XEHE_WORD32 (word.h: every prime below 2^30): the functions below take 32-bit paths where
 * their operands fit, from the 64-bit path's constants. floor(w * 2^32 / q) is the high half
 * of Shoup's floor(w * 2^64 / q); floor(2^32 / q) is the high half of Barrett's
 * r1 = floor(2^64 / q), and the low half of r1 is floor(w32 * 2^32 / q) for
 * w32 = 2^32 mod q = -floor(2^32 / q) * q (mod 2^32). Canonical results equal the 64-bit
 * arithmetic's; lazy ones stay within its bounds, so every kernel's output is unchanged.
 */
#if XEHE_WORD32
/* x mod q for any 64-bit x and q < 2^30: x = x1 * 2^32 + x0, x1 * 2^32 by Shoup (x1 times
 * w32), x0 by Barrett with floor(2^32 / q) (its quotient at most 1 short), each in [0, 2q);
 * their sum (< 4q < 2^32) reduced twice. */
DECLSPEC u64 reduce64_w32(u64 x, u32 q, u64 r1)
{
    u32 k = (u32)(r1 >> 32);
    u32 w = 0u - k * q;
    u32 x1 = (u32)(x >> 32), x0 = (u32)x;
    u32 s = shoup32_lazy(x1, w, (u32)r1, q) + (x0 - mulhi32(x0, k) * q);
    u32 two_q = 2 * q;
    s = s >= two_q ? s - two_q : s;
    return s >= q ? s - q : s;
}

/* x below 4q for x < 16q (the lazy values of the NTTs), so it fits 32 bits. */
DECLSPEC u32 below_4q_w32(u64 x, u64 q)
{
    u64 f = q << 3;
    x = x >= f ? x - f : x;
    f >>= 1;
    return (u32)(x >= f ? x - f : x);
}
#endif

/*
 * Intel inline-vISA fast paths (paper §V-A2, Listings 12/13), used by add_mod, mul64_wide and
 * mad64_wide when XEHE_INTEL_VISA=1 (portable.h: Intel GPUs only). XEHE_VISA_CHECK=1 compiles
 * the same limb arithmetic with a portable 32x32 product instead of the asm, so a test can
 * check the decomposition on any OpenCL device. Never compiled by Intel's compiler here.
 */
#if XEHE_INTEL_VISA || XEHE_VISA_CHECK
#define XEHE_STR_(x) #x
#define XEHE_STR(x) XEHE_STR_(x)

/* 32x32 -> 64 in one instruction: vISA mul with dword sources and a qword destination. */
DECLSPEC u64 visa_mul32_wide(u32 a, u32 b)
{
#if XEHE_INTEL_VISA
    u64 r;
    __asm__("mul (M1, " XEHE_STR(XEHE_VISA_SIMD) ") %0(0,0)<1> %1(0,0)<1;1,0> %2(0,0)<1;1,0>\n"
            : "=rw"(r) : "rw"(a), "rw"(b));
    return r;
#else
    return (u64)a * b;
#endif
}

/* 64x64 -> 128 from four 32x32 -> 64 products (no emulated 64-bit multiply). */
DECLSPEC u128_t visa_mul64_wide(u64 a, u64 b)
{
    u32 a0 = (u32)a, a1 = (u32)(a >> 32), b0 = (u32)b, b1 = (u32)(b >> 32);
    u64 p00 = visa_mul32_wide(a0, b0), p01 = visa_mul32_wide(a0, b1);
    u64 p10 = visa_mul32_wide(a1, b0), p11 = visa_mul32_wide(a1, b1);
    u64 mid = (p00 >> 32) + (u32)p01 + (u32)p10; /* < 2^34 */
    u128_t r;
    r.lo = (mid << 32) | (u32)p00;
    r.hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    return r;
}

/* a + b mod q for a, b < q: add, compare, then a predicated add of -q (Fig. 7b: one
 * instruction fewer than the compiler's select). */
#if XEHE_INTEL_VISA
DECLSPEC u64 visa_add_mod(u64 a, u64 b, u64 q)
{
    u64 r;
    __asm__("{\n"
            ".decl xehe_s%= v_type=G type=uq num_elts=" XEHE_STR(XEHE_VISA_SIMD) " align=qword\n"
            ".decl xehe_nq%= v_type=G type=q num_elts=" XEHE_STR(XEHE_VISA_SIMD) " align=qword alias=<%3,0>\n"
            ".decl xehe_p%= v_type=P num_elts=" XEHE_STR(XEHE_VISA_SIMD) "\n"
            "add (M1, " XEHE_STR(XEHE_VISA_SIMD) ") xehe_s%=(0,0)<1> %1(0,0)<1;1,0> %2(0,0)<1;1,0>\n"
            "cmp.ge (M1, " XEHE_STR(XEHE_VISA_SIMD) ") xehe_p%= xehe_s%=(0,0)<1;1,0> %3(0,0)<1;1,0>\n"
            "(xehe_p%=) add (M1, " XEHE_STR(XEHE_VISA_SIMD) ") xehe_s%=(0,0)<1> xehe_s%=(0,0)<1;1,0> (-)xehe_nq%=(0,0)<1;1,0>\n"
            "mov (M1, " XEHE_STR(XEHE_VISA_SIMD) ") %0(0,0)<1> xehe_s%=(0,0)<1;1,0>\n"
            "}\n"
            : "=rw"(r) : "rw"(a), "rw"(b), "rw"(q));
    return r;
}
#endif
#endif /* XEHE_INTEL_VISA || XEHE_VISA_CHECK */

DECLSPEC u128_t mul64_wide(u64 a, u64 b)
{
    u128_t r;
#if XEHE_WORD32
    if (((a | b) >> 32) == 0) {
        r.lo = (u64)(u32)a * (u32)b;
        r.hi = 0;
        return r;
    }
#endif
#if IS_CUDA && !XEHE_NO_ASM
    asm("mul.lo.u64 %0, %2, %3;\n\tmul.hi.u64 %1, %2, %3;" : "=l"(r.lo), "=l"(r.hi) : "l"(a), "l"(b));
#elif XEHE_INTEL_VISA
    r = visa_mul64_wide(a, b);
#else
    r.lo = a * b;
    r.hi = mulhi64(a, b);
#endif
    return r;
}

/* (hi:lo) + a*b, 128-bit. */
DECLSPEC u128_t mad64_wide(u64 a, u64 b, u128_t acc)
{
    u128_t r;
#if XEHE_WORD32
    /* Residues and key words: one 32x32 product and a carry. */
    if (((a | b) >> 32) == 0) {
        u64 p = (u64)(u32)a * (u32)b;
        r.lo = acc.lo + p;
        r.hi = acc.hi + (r.lo < p ? 1 : 0);
        return r;
    }
#endif
#if IS_CUDA && !XEHE_NO_ASM
    asm("mad.lo.cc.u64 %0, %2, %3, %4;\n\tmadc.hi.u64 %1, %2, %3, %5;"
        : "=l"(r.lo), "=l"(r.hi) : "l"(a), "l"(b), "l"(acc.lo), "l"(acc.hi));
#elif XEHE_INTEL_VISA
    u128_t p = visa_mul64_wide(a, b);
    r.lo = acc.lo + p.lo;
    r.hi = acc.hi + p.hi + (r.lo < p.lo ? 1 : 0);
#else
    u64 lo = a * b;
    u64 hi = mulhi64(a, b);
    r.lo = acc.lo + lo;
    r.hi = acc.hi + hi + (r.lo < lo ? 1 : 0);
#endif
    return r;
}

/* c + a * b for 32-bit a, b (one IMAD.WIDE.U32 on CUDA; the compiler's own lowering of the C
 * expression adds moves and a zero add per product). */
DECLSPEC u64 mad_wide32(u32 a, u32 b, u64 c)
{
#if IS_CUDA && !XEHE_NO_ASM
    u64 r;
    asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(r) : "r"(a), "r"(b), "l"(c));
    return r;
#else
    return c + (u64)a * b;
#endif
}

DECLSPEC u64 add_mod(u64 a, u64 b, u64 q)
{
#if XEHE_INTEL_VISA
    return visa_add_mod(a, b, q);
#else
    u64 s = a + b;
    return s >= q ? s - q : s;
#endif
}

DECLSPEC u64 sub_mod(u64 a, u64 b, u64 q)
{
    return a >= b ? a - b : a + q - b;
}

DECLSPEC u64 neg_mod(u64 a, u64 q)
{
    return a == 0 ? 0 : q - a;
}

/* x mod q for a 128-bit x, with r = floor(2^128 / q) = (r1:r0) (SEAL barrett_reduce_128). */
DECLSPEC u64 barrett_reduce_128(u128_t x, u64 q, u64 r0, u64 r1)
{
#if XEHE_WORD32
    /* (hi mod q) * 2^64 + lo in two 64-bit steps of 32 bits each. */
    (void)r0;
    u64 h = x.hi < q ? x.hi : reduce64_w32(x.hi, (u32)q, r1);
    u64 m = reduce64_w32((h << 32) | (x.lo >> 32), (u32)q, r1);
    return reduce64_w32((m << 32) | (x.lo & 0xffffffffu), (u32)q, r1);
#else
    u64 carry = mulhi64(x.lo, r0);
    u128_t t = mul64_wide(x.lo, r1);
    u64 tmp1 = t.lo + carry;
    u64 tmp3 = t.hi + (tmp1 < carry ? 1 : 0);
    t = mul64_wide(x.hi, r0);
    u64 s = t.lo + tmp1;
    carry = t.hi + (s < tmp1 ? 1 : 0);
    tmp1 = x.hi * r1 + tmp3 + carry;
    u64 r = x.lo - tmp1 * q;
    return r >= q ? r - q : r;
#endif
}

/* x mod q for a 64-bit x (SEAL barrett_reduce_64). */
DECLSPEC u64 barrett_reduce_64(u64 x, u64 q, u64 r1)
{
#if XEHE_WORD32
    return reduce64_w32(x, (u32)q, r1);
#else
    u64 t = mulhi64(x, r1);
    u64 r = x - t * q;
    return r >= q ? r - q : r;
#endif
}

/*
 * A sum of products modulo q, reduced once at the end (mac_value): 128 bits wide (mad64_wide,
 * SEAL's barrett_reduce_128) in general. With XEHE_WORD32 (every prime below 2^30) the
 * operands are canonical residues, so a product is below 2^60 and the sum is one u64: one
 * 32x32->64 multiply-add a term (mad_wide32), folded below q whenever its top bit is set (a
 * sum below 2^63 plus a product below 2^63 cannot wrap), where the 128-bit form needs a carry
 * word and three 64-bit reductions at the end. Any grouping of modular sums gives the same
 * canonical value, so both forms return the same words.
 */
#if XEHE_WORD32
typedef u64 mac_t;

DECLSPEC mac_t mac_zero(void)
{
    return 0;
}

DECLSPEC mac_t mac_add(mac_t s, u64 a, u64 b, u64 q, u64 r1)
{
    s = mad_wide32((u32)a, (u32)b, s);
    if (s >> 63) s = reduce64_w32(s, (u32)q, r1);
    return s;
}

DECLSPEC u64 mac_value(mac_t s, u64 q, u64 r0, u64 r1)
{
    (void)r0;
    return reduce64_w32(s, (u32)q, r1);
}
#else
typedef u128_t mac_t;

DECLSPEC mac_t mac_zero(void)
{
    mac_t s;
    s.lo = s.hi = 0;
    return s;
}

DECLSPEC mac_t mac_add(mac_t s, u64 a, u64 b, u64 q, u64 r1)
{
    (void)q;
    (void)r1;
    return mad64_wide(a, b, s);
}

DECLSPEC u64 mac_value(mac_t s, u64 q, u64 r0, u64 r1)
{
    return barrett_reduce_128(s, q, r0, r1);
}
#endif

/*
 * a * b mod q by Shivdikar et al.'s Algorithm 4 ("Accelerating Polynomial Multiplication for
 * Homomorphic Encryption on GPUs", IEEE SEED 2022, §II-B; Dhem–Quisquater Barrett with
 * α = m+1, β = −2): m = bit length of q (m <= 62), mu = floor(2^(2m+1) / q);
 * c = x >> (m−2), quot = (c·mu) >> (m+3), rem = x − quot·q, one conditional subtraction.
 * a, b < q. Host model: crate::math::generalized_barrett.
 */
DECLSPEC u64 mul_mod_generalized_barrett(u64 a, u64 b, u64 q, u64 mu, u32 m)
{
    u128_t x = mul64_wide(a, b);
    u32 s = m - 2;
    u64 c = (x.lo >> s) | (x.hi << (64 - s)); /* m >= 3, so 64 - s < 64 */
    u128_t t = mul64_wide(c, mu);
    u32 s2 = m + 3;
    u64 quot = s2 >= 64 ? t.hi >> (s2 - 64) : (t.lo >> s2) | (t.hi << (64 - s2));
    u64 rem = x.lo - quot * q;
    return rem >= q ? rem - q : rem;
}

/* The generalized Barrett mu = floor(2^(2m+1) / q) from SEAL's floor(2^128 / q) = (r1:r0): a right shift
 * by 127 − 2m (floor of a floor quotient by a power of two). */
DECLSPEC u64 generalized_barrett_mu(u32 m, u64 r0, u64 r1)
{
    u32 s = 127 - 2 * m;
    return s >= 64 ? r1 >> (s - 64) : (r0 >> s) | (r1 << (64 - s));
}

/* XEHE_BARRETT_GENERALIZED=1: mul_mod uses the generalized Barrett reduction (Dhem–Quisquater,
   Shivdikar et al.'s Algorithm 4) instead of SEAL's Barrett (ablation). */
#ifndef XEHE_BARRETT_GENERALIZED
#define XEHE_BARRETT_GENERALIZED 0
#endif

/* a * b mod q, Barrett (SEAL's constants r = floor(2^128 / q) = (r1:r0)). */
DECLSPEC u64 mul_mod(u64 a, u64 b, u64 q, u64 r0, u64 r1)
{
#if XEHE_WORD32
    if (((a | b) >> 32) == 0) return reduce64_w32((u64)(u32)a * (u32)b, (u32)q, r1);
#endif
#if XEHE_BARRETT_GENERALIZED
    u32 m = 64 - clz64(q);
    return mul_mod_generalized_barrett(a, b, q, generalized_barrett_mu(m, r0, r1), m);
#else
    return barrett_reduce_128(mul64_wide(a, b), q, r0, r1);
#endif
}

/* a * b + c mod q with one reduction: mad_mod (paper §V-A1). */
DECLSPEC u64 mad_mod(u64 a, u64 b, u64 c, u64 q, u64 r0, u64 r1)
{
    u128_t acc;
    acc.lo = c;
    acc.hi = 0;
    return barrett_reduce_128(mad64_wide(a, b, acc), q, r0, r1);
}

/* x * w mod q in [0, 2q), w with Shoup quotient wq = floor(w * 2^64 / q) (Harvey). With
 * XEHE_WORD32 x must be below 16q (every caller's bound): it is taken below 4q, then Shoup's
 * product in 32-bit words. */
DECLSPEC u64 mul_shoup_lazy(u64 x, u64 w, u64 wq, u64 q)
{
#if XEHE_WORD32
    return shoup32_lazy(below_4q_w32(x, q), (u32)w, (u32)(wq >> 32), (u32)q);
#else
    u64 hi = mulhi64(x, wq);
    return x * w - hi * q;
#endif
}

/*
 * floor(x * y / 2^64) or one less: the high product without the lowest partial product x0 * y0
 * of the 32-bit halves (below 2^64, so leaving it out lowers the result by at most 1). On CUDA
 * three IMAD.WIDE and one carry instead of __umul64hi's four, two carries and a copy.
 */
DECLSPEC u64 mulhi64_approx(u64 x, u64 y)
{
#if IS_CUDA && !XEHE_NO_ASM
    /* The carry of the middle sum stays in the carry flag (the compiler's version compares). */
    u64 hi;
    asm("{\n\t.reg .u32 x0, x1, y0, y1, m0, m1, c, h0, h1;\n\t"
        "mov.b64 {x0, x1}, %1;\n\tmov.b64 {y0, y1}, %2;\n\t"
        "mul.lo.u32 m0, x0, y1;\n\tmul.hi.u32 m1, x0, y1;\n\t"
        "mad.lo.cc.u32 m0, x1, y0, m0;\n\tmadc.hi.cc.u32 m1, x1, y0, m1;\n\taddc.u32 c, 0, 0;\n\t"
        "mad.lo.cc.u32 h0, x1, y1, m1;\n\tmadc.hi.u32 h1, x1, y1, c;\n\t"
        "mov.b64 %0, {h0, h1};\n\t}"
        : "=l"(hi) : "l"(x), "l"(y));
    return hi;
#else
    u32 x0 = (u32)x, x1 = (u32)(x >> 32), y0 = (u32)y, y1 = (u32)(y >> 32);
    u64 a = (u64)x0 * y1;
    u64 mid = a + (u64)x1 * y0;
    u64 carry = mid < a ? ONE_32 : 0;
    return (u64)x1 * y1 + (mid >> 32) + carry;
#endif
}

/*
 * x * w mod q in [0, 3q) for any 64-bit x: mul_shoup_lazy with the quotient from
 * mulhi64_approx, at most 1 short of Shoup's (never over, so the result is not negative). The
 * NTT butterflies' product (ntt.cl fwd_bf_r, inv_bf). With XEHE_WORD32: mul_shoup_lazy's
 * 32-bit product (x < 16q, result below 2q).
 */
DECLSPEC u64 mul_shoup_lazy3(u64 x, u64 w, u64 wq, u64 q)
{
#if XEHE_WORD32
    return mul_shoup_lazy(x, w, wq, q);
#else
    return x * w - mulhi64_approx(x, wq) * q;
#endif
}

DECLSPEC u64 mul_shoup(u64 x, u64 w, u64 wq, u64 q)
{
    u64 r = mul_shoup_lazy(x, w, wq, q);
    return r >= q ? r - q : r;
}

/* P^{-1} (x - d) mod q for canonical x, d (Shoup constant inv_p, inv_p_q): mod-down's and
 * rescale's last step (keyswitch.cl moddown_finish_u64, ntt.cl ntt_fwd_cluster_moddown_fin_u64). */
DECLSPEC u64 moddown_scaled_diff(u64 x, u64 d, u64 q, u64 inv_p, u64 inv_p_q)
{
    return mul_shoup(x + q - d, inv_p, inv_p_q, q);
}

/*
 * Key switching's digit lift / mod-down correction applied to a source word on its way into a
 * forward NTT (ntt.cl fwd_radix_pass and the cluster NTTs of ntt.cl and ntt32.cl): x mod q, or with p_last != 0
 * ((x + h) mod p_last) mod q + (q - h mod q), h = floor(p_last / 2). r1: q's Barrett constant.
 */
typedef struct { u64 c1, h, fix, p_last, p_last_r1; } lift_t;

DECLSPEC lift_t lift_init(u64 c1, u64 q, u64 p_last, u64 p_last_r1)
{
    lift_t l;
    l.c1 = c1;
    l.h = p_last >> 1;
    l.fix = p_last ? q - barrett_reduce_64(l.h, q, c1) : 0;
    l.p_last = p_last;
    l.p_last_r1 = p_last_r1;
    return l;
}

DECLSPEC u64 lift_word(lift_t l, u64 x, u64 q)
{
    if (l.p_last) x = barrett_reduce_64(x + l.h, l.p_last, l.p_last_r1);
    return barrett_reduce_64(x, q, l.c1) + l.fix;
}

#endif /* XEHE_MODARITH_H */
