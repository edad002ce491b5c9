/*
 * keyswitch.cl — SEAL's key switching with one special prime P, and the shared
 * divide-and-round-by-the-last-prime steps used by rescale (SEAL switch_key_inplace,
 * RNSTool::divide_and_round_q_last_ntt_inplace). See src/ckks/evaluator/keyswitch.rs for the
 * algorithm; the GPU runs the same canonical arithmetic, so results are bit-identical.
 */
#include "modarith.h"
#include "chacha.h"

/*
 * Digit lift: lifted[j][i][x] = t[j][x] mod p_i for digits j < kd and output primes i < kp
 * (the level's primes then P). Layout digit-major, so row = j*kp + i uses prime i = row % kp.
 */
KERNEL_FQ void ks_lift_u64(GLOBAL_AS DWORD *lifted, CONST_AS DWORD *t, CONST_AS u64 *out_moduli,
                           CONST_AS u64 *out_r1, u32 kd, u32 kp, u32 log_n)
{
    u64 n = (u64)1 << log_n;
    u64 total = (u64)kd * kp * n;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u64 row = g >> log_n, x = g & (n - 1);
        u32 j = (u32)(row / kp), i = (u32)(row % kp);
        lifted[g] = (DWORD)barrett_reduce_64(t[((u64)j << log_n) + x], out_moduli[i], out_r1[i]);
    }
}

/*
 * Two-component inner-product accumulator: sum_j v_j * k0_j and sum_j v_j * k1_j modulo q, as
 * sums of products reduced once at the end (mac_t: 128 bits, or one u64 with XEHE_WORD32), or
 * reduced at every step with XEHE_NO_MAD.
 */
#if XEHE_NO_MAD
typedef u64 ks_sum_t;
#else
typedef mac_t ks_sum_t;
#endif
typedef struct {
    ks_sum_t a0, a1;
} ks_acc2_t;

DECLSPEC ks_acc2_t ks_acc2_zero(void)
{
    ks_acc2_t a;
#if XEHE_NO_MAD
    a.a0 = a.a1 = 0;
#else
    a.a0 = a.a1 = mac_zero();
#endif
    return a;
}

DECLSPEC ks_acc2_t ks_acc2_add(ks_acc2_t a, u64 v, u64 k0, u64 k1, u64 q, u64 c0, u64 c1)
{
#if XEHE_NO_MAD
    a.a0 = add_mod(a.a0, mul_mod(v, k0, q, c0, c1), q);
    a.a1 = add_mod(a.a1, mul_mod(v, k1, q, c0, c1), q);
#else
    a.a0 = mac_add(a.a0, v, k0, q, c1);
    a.a1 = mac_add(a.a1, v, k1, q, c1);
#endif
    return a;
}

/* The canonical value of one accumulated component. */
DECLSPEC u64 ks_acc_value(ks_sum_t a, u64 q, u64 c0, u64 c1)
{
#if XEHE_NO_MAD
    return a;
#else
    return mac_value(a, q, c0, c1);
#endif
}

/*
 * Inner product with the key for output prime i (key limb ki) at word x:
 * prod[c][i][x] = sum_j lifted[j][i][x] * key[j][c][ki][x] mod p_i, c in {0,1}, over kd digits.
 * key: digits × 2 × key_k × N words (each digit a size-2 ciphertext at the key level).
 * With t_ntt != 0 (the target in NTT form, kd × N), the digit at its own prime (j == i) is read
 * from there: NTT(t[i] mod q_i) is the target limb itself, so that lifted row need not exist.
 */
DECLSPEC void ks_inner_at(GLOBAL_AS DWORD *prod, CONST_AS DWORD *lifted, CONST_AS DWORD *key, CONST_AS DWORD *t_ntt, u64 q,
                          u64 c0, u64 c1, u32 kd, u32 kp, u32 key_k, u32 i, u32 ki, u64 x, u64 total, u32 log_n)
{
    u64 g = ((u64)i << log_n) + x;
    ks_acc2_t a = ks_acc2_zero();
#pragma unroll 4
    for (u32 j = 0; j < kd; j++) {
        u64 v = t_ntt && j == i ? t_ntt[((u64)j << log_n) + x] : lifted[(((u64)j * kp + i) << log_n) + x];
        u64 kb = (((u64)j * 2) * key_k + ki) << log_n;
        a = ks_acc2_add(a, v, key[kb + x], key[kb + ((u64)key_k << log_n) + x], q, c0, c1);
    }
    prod[g] = (DWORD)ks_acc_value(a.a0, q, c0, c1);
    prod[total + g] = (DWORD)ks_acc_value(a.a1, q, c0, c1);
}

/*
 * SEAL's inner product: kp = k+1 output primes (the level's, then P); kprime(i) = i for
 * i < kp-1 and key_k-1 (the special prime) for i = kp-1. own_from_t: read each digit's own
 * prime from t_ntt (ks_inner_at), not from `lifted`. Only output primes i in [i_begin, i_end)
 * are computed (the special prime first, so its mod-down can start on a side stream while the
 * others stream; src/device/gpu/eval.rs switch_key).
 */
KERNEL_FQ void ks_inner_u64(GLOBAL_AS DWORD *prod, CONST_AS DWORD *lifted, CONST_AS DWORD *key, CONST_AS u64 *out_moduli,
                            CONST_AS u64 *out_r0, CONST_AS u64 *out_r1, u32 kd, u32 kp, u32 key_k, u32 log_n,
                            CONST_AS DWORD *t_ntt, u32 own_from_t, u32 i_begin, u32 i_end)
{
    u64 n = (u64)1 << log_n;
    u64 total = (u64)kp * n, end = (u64)i_end << log_n;
    for (u64 g = ((u64)i_begin << log_n) + GLOBAL_ID(); g < end; g += GLOBAL_SIZE()) {
        u32 i = (u32)(g >> log_n);
        u32 ki = i + 1 == kp ? key_k - 1 : i;
        ks_inner_at(prod, lifted, key, own_from_t ? t_ntt : 0, out_moduli[i], out_r0[i], out_r1[i], kd, kp, key_k, i, ki,
                    g & (n - 1), total, log_n);
    }
}

/* Keys (rotations of one hoisted ModUp) one work-item of ks_inner_hybrid_u64 takes, 1 to 4; the host sets it. */
#ifndef KS_KEYS
#define KS_KEYS 1
#endif

/*
 * 1: ks_inner_hybrid_u64 writes a rotation's products permuted, with P·c0 added (see there).
 * 2: the same with c0 given in the extended base (data limbs from c0, special limbs from c0p) and
 *    added on every limb times p_mod[o] (ones: double hoisting's giant steps, whose c0 is already
 *    multiplied by P).
 */
#ifndef KS_ROTATE
#define KS_ROTATE 0
#endif

/*
 * 1 (with KS_ROTATE): a running sum in the extended base (data limbs from tq, special limbs from
 * tp, both components, laid out as the products) added at each output word (one key per launch):
 * a linear transform's giant steps, from an extended ciphertext (KS_ROTATE=2) or from a sum made
 * in Q_l (KS_ROTATE=1: single hoisting, src/circuits/lintrans/single.rs).
 */
#ifndef KS_ROTATE_SUM
#define KS_ROTATE_SUM 0
#endif

/*
 * 1: ks_inner_hybrid_u64 adds P·c0 and P·c1 (c0 and c1 component-major from the c0 argument, times
 * p_mod[o]) to components 0 and 1 of every data limb, so that ModDown by P·q_last of the products
 * is relinearization and rescale at once (src/ckks/hybrid.rs, "ModDown fused with the rescale").
 * One key, no KS_ROTATE.
 */
#ifndef KS_PC
#define KS_PC 0
#endif

/*
 * Groups of KS_KEYS keys one ks_inner_hybrid_u64 launch takes (KS_GROUPS × KS_KEYS <= 16; keys of
 * group h are the arguments h·KS_KEYS + r, r < KS_KEYS). Work-items come in spans of KS_SPAN words
 * (one CTA of the CUDA launcher, so h is uniform in a CTA): consecutive spans take the same words
 * for the next group, so the groups' blocks run side by side and read the ModUp rows, t and c0
 * from L2 after the first (hoisted rotations: the rows cross DRAM once for up to 16 keys; more
 * keys in one work-item would cost registers).
 */
#ifndef KS_GROUPS
#define KS_GROUPS 1
#endif
#define KS_SPAN 256u

/*
 * 1: the key arguments are compact forms (chacha.h; src/device/gpu/key_expand.rs): component 0
 * read from the form (digit-major after its leading block of N words), component 1 generated
 * here from the digits' seeds. A work-group's 256 work-items take 256 aligned words of one limb
 * (work-groups of 256; N >= 256), whose key words (Galois keys: the words their outputs land
 * on, the automorphism keeping aligned blocks of 256 together) are 32 ChaCha blocks a digit:
 * the group makes them together into local memory (ks_compact_fill), so each is made once.
 */
#ifndef KS_COMPACT
#define KS_COMPACT 0
#endif
#if KS_COMPACT && XEHE_WORD32
#error "compact keys have no 32-bit data words yet (their leading block of seeds is u64)"
#endif
#define KS_GROUP 256u

/* Component 0 of digit j, key row ki, word x of a compact key (digit-major after the leading block). */
#define KS_COMPACT_C0(key, j, key_k, ki, x, log_n) ((key)[((1 + (u64)(j) * (key_k) + (ki)) << (log_n)) + (x)])

#if KS_COMPACT
/*
 * Words base … base + 255 (base a multiple of 256) of key row ki of component 1 of key digit
 * j0 + j for every j < KS_DIGITS of the compact key `key` into kw[j·256 + i]: block b < 32 of digit j by
 * work-item j·32 + b of the group. Every work-item of the group calls it (barriers: the words
 * before are read, these are written).
 */
DECLSPEC void ks_compact_fill(LOCAL_AS u64 *kw, CONST_AS u64 *key, u32 key_k, u32 j0, u32 ki, u64 base, u32 log_n)
{
    SYNC_THREADS();
    u32 i = LOCAL_ID();
    if (i < KS_DIGITS * 32u) {
        u32 j = i >> 5, b = i & 31u;
        u64 v[8];
        compact_key_words(key, key_k, j0 + j, ki, base + 8 * b, log_n, v);
#pragma unroll
        for (u32 w = 0; w < 8; w++) kw[j * KS_GROUP + 8 * b + w] = v[w];
    }
    SYNC_THREADS();
}
#endif

/* Argument a (< 16) of p0…p15 (a switch: uniform in a CTA, folded for a constant a). */
#define KS_ARG16(T, a, p)                                                                                              \
    switch (a) {                                                                                                       \
    case 0: return p##0; case 1: return p##1; case 2: return p##2; case 3: return p##3;                                \
    case 4: return p##4; case 5: return p##5; case 6: return p##6; case 7: return p##7;                                \
    case 8: return p##8; case 9: return p##9; case 10: return p##10; case 11: return p##11;                            \
    case 12: return p##12; case 13: return p##13; case 14: return p##14; default: return p##15;                        \
    }
#define KS_PARAMS16(T, p)                                                                                              \
    T p##0, T p##1, T p##2, T p##3, T p##4, T p##5, T p##6, T p##7, T p##8, T p##9, T p##10, T p##11, T p##12,          \
        T p##13, T p##14, T p##15
DECLSPEC_INLINE CONST_AS DWORD *ks_key_arg(u32 a, KS_PARAMS16(CONST_AS DWORD *, key)) { KS_ARG16(DWORD, a, key) }
DECLSPEC_INLINE CONST_AS u32 *ks_scatter_arg(u32 a, KS_PARAMS16(CONST_AS u32 *, s)) { KS_ARG16(u32, a, s) }

/*
 * Hybrid key switching's inner product (src/ckks/hybrid.rs step 2) over the e = ell + alpha
 * extended limbs (the level's ell data primes, then the alpha special primes, which are the last
 * alpha limbs of the key base: key limb ki = row0 + o for o < ell, else o + key_k - e), `digits`
 * digits of d primes. row0: the key base's data prime of the level's first limb (0 on a prefix;
 * a composite level's window: its digit j is key digit row0/d + j, the first one cut at its start,
 * rns_conv_u64's `off`). The ModUp operand of digit j on limb o is, in NTT form:
 *   - data limb o of its own digit j = (o + row0 % d) / d: the target t itself (t[o]),
 *   - another data limb: up_q row o*(digits-1) + (j < own ? j : j-1) (rns_conv_u64, skip = 1),
 *   - special limb o >= ell: up_p row (o-ell)*digits + j.
 * Only the limbs o in [o_begin, o_end) are computed (the special limbs first, so their ModDown
 * can start on a side stream while the data limbs' products stream; src/device/gpu/hybrid.rs).
 * Output, for each of the first KS_KEYS keys of each of the KS_GROUPS groups (key h·KS_KEYS + r:
 * the argument key<h·KS_KEYS + r>; hoisted rotations read the ModUp rows from DRAM once for all of them;
 * the unused pointer arguments may repeat the used ones), in slot z = h·KS_KEYS + r: products at
 * prod_q + z·2·ell·N (2 × ell rows) and prod_p + z·2·alpha·N (2 × alpha rows), component-major.
 *
 * KS_ROTATE (hoisted rotations, keys pre-permuted by the inverse automorphism): word x of key r's
 * products is written at s_r[x] (s_r: the NTT-domain table of the inverse automorphism, so the
 * products come out permuted: perm(Σ_j U_j·perm⁻¹(K_j)) = Σ_j perm(U_j)·K_j), and component 0 of
 * every data limb also accumulates c0[o][x]·(P mod q_o) (p_mod), so ModDown's P^{-1}(x − conv)
 * is already c0 permuted plus the switched part: the finish neither gathers nor adds. The
 * automorphism maps each aligned block of 2^b words onto an aligned block of 2^b words, so a warp's
 * 32 scattered stores fill whole sectors. Without KS_ROTATE s0…s15, c0 and p_mod are unused.
 */
KERNEL_FQ void ks_inner_hybrid_u64(GLOBAL_AS DWORD *prod_q, GLOBAL_AS DWORD *prod_p, CONST_AS DWORD *up_q,
                                   CONST_AS DWORD *up_p, CONST_AS DWORD *t, CONST_AS DWORD *key0, CONST_AS DWORD *key1,
                                   CONST_AS DWORD *key2, CONST_AS DWORD *key3, CONST_AS DWORD *key4, CONST_AS DWORD *key5,
                                   CONST_AS DWORD *key6, CONST_AS DWORD *key7, CONST_AS DWORD *key8, CONST_AS DWORD *key9,
                                   CONST_AS DWORD *key10, CONST_AS DWORD *key11, CONST_AS DWORD *key12,
                                   CONST_AS DWORD *key13, CONST_AS DWORD *key14, CONST_AS DWORD *key15, CONST_AS u32 *s0,
                                   CONST_AS u32 *s1, CONST_AS u32 *s2, CONST_AS u32 *s3, CONST_AS u32 *s4,
                                   CONST_AS u32 *s5, CONST_AS u32 *s6, CONST_AS u32 *s7, CONST_AS u32 *s8,
                                   CONST_AS u32 *s9, CONST_AS u32 *s10, CONST_AS u32 *s11, CONST_AS u32 *s12,
                                   CONST_AS u32 *s13, CONST_AS u32 *s14, CONST_AS u32 *s15, CONST_AS DWORD *c0,
                                   CONST_AS u64 *p_mod, CONST_AS DWORD *c0p, CONST_AS DWORD *tq, CONST_AS DWORD *tp, CONST_AS u64 *out_moduli, CONST_AS u64 *out_r0,
                                   CONST_AS u64 *out_r1, u32 digits, u32 d, u32 ell, u32 alpha, u32 key_k, u32 row0,
                                   u32 log_n, u32 o_begin, u32 o_end)
{
    u64 n = (u64)1 << log_n;
    u32 e = ell + alpha;
    u64 words = (u64)(o_end - o_begin) * n;
#if KS_COMPACT
    LOCAL_ARRAY(u64, kw, KS_DIGITS * KS_GROUP);
#endif
#if KS_GROUPS > 1
    u64 total = (words + KS_SPAN - 1) / KS_SPAN * KS_SPAN * KS_GROUPS;
#else
    u64 total = words;
#endif
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
#if KS_GROUPS > 1
        /* Span sp of KS_SPAN work-items: group sp % KS_GROUPS, the words of span sp / KS_GROUPS. */
        u64 sp = g / KS_SPAN;
        u32 h = (u32)(sp % KS_GROUPS);
        u64 w = (sp / KS_GROUPS) * KS_SPAN + g % KS_SPAN;
        if (w >= words) continue;
#else
        u32 h = 0;
        u64 w = g;
#endif
        CONST_AS DWORD *keys[KS_KEYS];
#pragma unroll
        for (u32 r = 0; r < KS_KEYS; r++)
            keys[r] = ks_key_arg(h * KS_KEYS + r, key0, key1, key2, key3, key4, key5, key6, key7, key8, key9, key10,
                                 key11, key12, key13, key14, key15);
#if KS_ROTATE
        CONST_AS u32 *scatter[KS_KEYS];
#pragma unroll
        for (u32 r = 0; r < KS_KEYS; r++)
            scatter[r] = ks_scatter_arg(h * KS_KEYS + r, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14,
                                        s15);
#endif
        u32 o = o_begin + (u32)(w >> log_n);
        u64 x = w & (n - 1);
        u32 data = o < ell;
        u32 ki = data ? row0 + o : o + key_k - e;
        u32 own = data ? (o + row0 % d) / d : digits;
        u32 j0 = row0 / d;
        CONST_AS DWORD *rows = data ? up_q + (((u64)o * (digits - 1)) << log_n) : up_p + (((u64)(o - ell) * digits) << log_n);
        u64 q = out_moduli[o], c0r = out_r0[o], c1r = out_r1[o];
        ks_acc2_t a[KS_KEYS];
#pragma unroll
        for (u32 r = 0; r < KS_KEYS; r++) a[r] = ks_acc2_zero();
#if KS_COMPACT
        /* A group's words are one limb's aligned 256 (uniform o, ki; the `continue` above is
         * uniform too): each key's words made by the group, then its digits accumulated. */
        u64 vs[KS_DIGITS];
#pragma unroll
        for (u32 j = 0; j < KS_DIGITS; j++)
            vs[j] = j == own ? t[((u64)o << log_n) + x] : rows[((u64)(j > own ? j - 1 : j) << log_n) + x];
#pragma unroll
        for (u32 r = 0; r < KS_KEYS; r++) {
#if KS_ROTATE
            u64 at = scatter[r][x];
#else
            u64 at = x;
#endif
            ks_compact_fill(kw, keys[r], key_k, j0, ki, at & ~(u64)(KS_GROUP - 1), log_n);
#pragma unroll
            for (u32 j = 0; j < KS_DIGITS; j++)
                a[r] = ks_acc2_add(a[r], vs[j], KS_COMPACT_C0(keys[r], j0 + j, key_k, ki, x, log_n),
                                   kw[j * KS_GROUP + (at & (KS_GROUP - 1))], q, c0r, c1r);
        }
#else
#ifdef KS_DIGITS
        /* The digit count compiled in (the host's default): the loop unrolls and the compiler
         * keeps more of the digits' loads in flight (hoisted batch at 2^16: 1506 → 1340 µs). */
#pragma unroll
        for (u32 j = 0; j < KS_DIGITS; j++) {
#else
        for (u32 j = 0; j < digits; j++) {
#endif
            u64 v = j == own ? t[((u64)o << log_n) + x] : rows[((u64)(j > own ? j - 1 : j) << log_n) + x];
            u64 kb = (((u64)(j0 + j) * 2) * key_k + ki) << log_n;
#pragma unroll
            for (u32 r = 0; r < KS_KEYS; r++)
                a[r] = ks_acc2_add(a[r], v, keys[r][kb + x], keys[r][kb + ((u64)key_k << log_n) + x], q, c0r, c1r);
        }
#endif
#if KS_PC
        if (data) {
            u64 at = ((u64)o << log_n) + x, pm = p_mod[o];
            a[0] = ks_acc2_add(a[0], c0[at], pm, 0, q, c0r, c1r);
            a[0] = ks_acc2_add(a[0], c0[((u64)ell << log_n) + at], 0, pm, q, c0r, c1r);
        }
#endif
#if KS_ROTATE
        if (data || KS_ROTATE == 2) {
            u64 v = data ? c0[((u64)o << log_n) + x] : c0p[((u64)(o - ell) << log_n) + x], pm = p_mod[o];
#pragma unroll
            for (u32 r = 0; r < KS_KEYS; r++) a[r] = ks_acc2_add(a[r], v, pm, 0, q, c0r, c1r);
        }
#endif
        u64 row = data ? (u64)o << log_n : (u64)(o - ell) << log_n;
        u64 comp = data ? (u64)ell << log_n : (u64)alpha << log_n;
#pragma unroll
        for (u32 r = 0; r < KS_KEYS; r++) {
#if KS_ROTATE
            u64 at = scatter[r][x];
#else
            u64 at = x;
#endif
            GLOBAL_AS DWORD *dst = (data ? prod_q : prod_p) + ((u64)h * KS_KEYS + r) * 2 * comp + row;
#if KS_ROTATE_SUM
            {
                CONST_AS DWORD *sum = (data ? tq : tp) + row;
                a[r] = ks_acc2_add(a[r], sum[at], 1, 0, q, c0r, c1r);
                a[r] = ks_acc2_add(a[r], sum[comp + at], 0, 1, q, c0r, c1r);
            }
#endif
            dst[at] = (DWORD)ks_acc_value(a[r].a0, q, c0r, c1r);
            dst[comp + at] = (DWORD)ks_acc_value(a[r].a1, q, c0r, c1r);
        }
    }
}

/*
 * Mod-down preparation, for polys c < polys: given last[c][x] (coefficient form, < 2*p_last,
 * modulo p_last), writes d[c][i][x] = ((last + half_p) mod p_last) mod q_i + (q_i - half_p mod q_i)
 * for i < k; the caller then NTTs d (values < 2 q_i). half_p = floor(p_last / 2).
 */
KERNEL_FQ void moddown_prep_u64(GLOBAL_AS DWORD *d, CONST_AS DWORD *last, CONST_AS u64 *moduli, CONST_AS u64 *r1,
                                u64 p_last, u64 p_last_r1, u32 k, u32 polys, u32 log_n)
{
    u64 n = (u64)1 << log_n;
    u64 total = (u64)polys * k * n;
    u64 half_p = p_last >> 1;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u64 row = g >> log_n, x = g & (n - 1);
        u32 c = (u32)(row / k), i = (u32)(row % k);
        u64 v = barrett_reduce_64(last[((u64)c << log_n) + x] + half_p, p_last, p_last_r1);
        u64 q = moduli[i];
        d[g] = (DWORD)(barrett_reduce_64(v, q, r1[i]) + (q - barrett_reduce_64(half_p, q, r1[i])));
    }
}

/*
 * Mod-down finish: out[c][i][x] = c01[c][i][x] + inv_p[i] * (x[c][i][x] + q_i - d[c][i][x]) mod q_i
 * for the first c_words words of out (c01 read as 0 past them: 0 for rescale, k·N for a rotation
 * whose c1 is 0), x and d canonical. x has row stride x_stride polys (k+1 rows per poly for key
 * switching's prod, k+1 for rescale's input), out and c01 have k rows per poly (c01 may be out:
 * each word is read before it is written, by the same work-item).
 */
KERNEL_FQ void moddown_finish_u64(GLOBAL_AS DWORD *out, CONST_AS DWORD *c01, CONST_AS DWORD *xs, CONST_AS DWORD *d,
                                  CONST_AS u64 *moduli, CONST_AS u64 *inv_p, CONST_AS u64 *inv_p_q, u32 k,
                                  u32 x_rows_per_poly, u32 polys, u32 log_n, u64 c_words)
{
    u64 n = (u64)1 << log_n;
    u64 total = (u64)polys * k * n;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u64 row = g >> log_n, x = g & (n - 1);
        u32 c = (u32)(row / k), i = (u32)(row % k);
        u64 q = moduli[i];
        u64 r = moddown_scaled_diff(xs[(((u64)c * x_rows_per_poly + i) << log_n) + x], d[g], q, inv_p[i], inv_p_q[i]);
        out[g] = (DWORD)(g < c_words ? add_mod(c01[g], r, q) : r);
    }
}

/*
 * Hybrid ModDown finish into a fresh buffer: out[g] = c[g] + P^{-1} (xs[g] - d[g]) mod q_i over
 * polys × k rows (row i of each poly under q_i), where c[g] = c01[g] for g < c_words and 0 past
 * it (apply_galois: c1 = 0); c01, xs, d canonical, all k rows per poly.
 */
KERNEL_FQ void moddown_finish_add_u64(GLOBAL_AS DWORD *out, CONST_AS DWORD *c01, CONST_AS DWORD *xs, CONST_AS DWORD *d,
                                      CONST_AS u64 *moduli, CONST_AS u64 *inv_p, CONST_AS u64 *inv_p_q, u32 k,
                                      u32 log_n, u64 c_words, u64 total)
{
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u32 i = (u32)((g >> log_n) % k);
        u64 q = moduli[i];
        u64 r = moddown_scaled_diff(xs[g], d[g], q, inv_p[i], inv_p_q[i]);
        out[g] = (DWORD)(g < c_words ? add_mod(c01[g], r, q) : r);
    }
}

/* Gather rows: out[c][x] = in[c * stride_rows + row][x] for c < polys (e.g. the last limb of every poly). */
KERNEL_FQ void gather_row_u64(GLOBAL_AS DWORD *out, CONST_AS DWORD *in, u32 stride_rows, u32 row, u32 polys, u32 log_n)
{
    u64 n = (u64)1 << log_n;
    u64 total = (u64)polys * n;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u64 c = g >> log_n, x = g & (n - 1);
        out[g] = in[((c * stride_rows + row) << log_n) + x];
    }
}

/*
 * Gather rows by a table, optionally scaled (the composite rescale, src/device/gpu/composite.rs):
 * out[p][i][x] = in[p * in_rows + rows[i]][x] for polys p and output rows i < out_rows, times
 * s[i] mod moduli[i] where `scaled` (s canonical; moduli, r0, r1 the output rows' primes and
 * SEAL's Barrett constants, unused otherwise). A row from in_rows on is row rows[i] - in_rows of
 * poly p in `in2` (in2_rows a poly; the special rows of an extended polynomial, whose ModDown
 * the rescale fuses). total = polys * out_rows * N.
 */
KERNEL_FQ void gather_rows_u64(GLOBAL_AS DWORD *out, CONST_AS DWORD *in, CONST_AS DWORD *in2, CONST_AS u64 *rows,
                               u32 out_rows, u32 in_rows, u32 in2_rows, u32 scaled, CONST_AS u64 *s,
                               CONST_AS u64 *moduli, CONST_AS u64 *r0, CONST_AS u64 *r1, u32 log_n, u64 total)
{
    u64 n = (u64)1 << log_n;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u64 row = g >> log_n, x = g & (n - 1);
        u32 p = (u32)(row / out_rows), i = (u32)(row % out_rows);
        u64 r = rows[i];
        u64 v = r < in_rows ? in[(((u64)p * in_rows + r) << log_n) + x]
                            : in2[(((u64)p * in2_rows + r - in_rows) << log_n) + x];
        out[g] = (DWORD)(scaled ? mul_mod(v, s[i], moduli[i], r0[i], r1[i]) : v);
    }
}

/* Galois automorphism in NTT form: out[r][x] = in[r][table[x]] for every row. */
KERNEL_FQ void galois_permute_u64(GLOBAL_AS DWORD *out, CONST_AS DWORD *in, CONST_AS u32 *table, u32 log_n, u64 total)
{
    u64 n = (u64)1 << log_n;
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u64 row = g >> log_n, x = g & (n - 1);
        out[g] = in[(row << log_n) + table[x]];
    }
}

/*
 * ModRaise (bootstrapping; src/ckks/evaluator/modraise.rs): in = polys x N coefficients mod q_0
 * (canonical); out row (p, i), i < k, is the centred lift of poly p mod moduli[i]:
 * c mod m, less q_0 mod m when c > half_q0 = floor(q_0 / 2). q0_mod[i] = q_0 mod moduli[i].
 */
KERNEL_FQ void modraise_lift_u64(GLOBAL_AS DWORD *out, CONST_AS DWORD *in, CONST_AS u64 *moduli, CONST_AS u64 *r1,
                                 CONST_AS u64 *q0_mod, u64 half_q0, u32 k, u32 log_n, u64 total)
{
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u64 row = g >> log_n;
        u32 i = (u32)(row % k);
        u64 p = row / k;
        u64 c = in[(p << log_n) | (g & ((((u64)1) << log_n) - 1))];
        u64 m = moduli[i];
        u64 r = barrett_reduce_64(c, m, r1[i]);
        out[g] = (DWORD)(c > half_q0 ? sub_mod(r, q0_mod[i], m) : r);
    }
}

#if IS_CUDA
/* Sums one ks_inner_sums_u64 launch accumulates (1 to 4; the host sets it). */
#ifndef KS_SUMS
#define KS_SUMS 1
#endif
/* Digits of one ks_inner_sums_u64 launch's keys (the host sets it). */
#ifndef KS_DIGITS
#define KS_DIGITS 1
#endif
/* Words of one rotation's descriptor in ks_inner_sums_u64's table. */
#define KS_ROT_DESC (2 + KS_SUMS)

/* Word y's source under the NTT-domain automorphism galois_elt (GaloisTool::permutation_ntt,
 * SEAL generate_table_ntt): bitrev(((elt · (2·bitrev(y) + 1)) >> 1) mod N), in registers
 * instead of a table load that the key loads would wait for. */
DECLSPEC u64 ks_galois_index(u64 y, u32 elt, u32 log_n)
{
    u32 rev = __brev((u32)y) >> (32 - log_n);
    u32 raw = ((elt * (2 * rev + 1)) >> 1) & ((1u << log_n) - 1);
    return __brev(raw) >> (32 - log_n);
}

#if KS_COMPACT
/* One hoisted rotation's value at extended limb o, output word y (ks_inner_sums_u64), compact
 * keys: the key's uniform half from the group's shared words (ks_compact_fill). */
DECLSPEC void ks_rot_word(u64 *v0, u64 *v1, CONST_AS u64 *desc, u64 y, u32 log_n, u64 lim, u32 own, u32 data,
                          u32 ki, u32 key_k, u32 j0, CONST_AS DWORD *rows, CONST_AS DWORD *ct, CONST_AS DWORD *c1, u64 pm,
                          u64 q, u64 c0r, u64 c1r, LOCAL_AS u64 *kw)
{
    CONST_AS DWORD *key = (CONST_AS DWORD *)desc[0];
    u64 x = ks_galois_index(y, (u32)desc[1], log_n);
    ks_acc2_t a = ks_acc2_zero();
#pragma unroll
    for (u32 j = 0; j < KS_DIGITS; j++) {
        u64 v = j == own ? c1[lim + x] : rows[((u64)(j > own ? j - 1 : j) << log_n) + x];
        /* Component 1 in natural order: the key at y (ks_compact_fill). */
        a = ks_acc2_add(a, v, KS_COMPACT_C0(key, j0 + j, key_k, ki, x, log_n), kw[j * KS_GROUP + (y & (KS_GROUP - 1))], q, c0r, c1r);
    }
    if (data) a = ks_acc2_add(a, ct[lim + x], pm, 0, q, c0r, c1r);
    *v0 = ks_acc_value(a.a0, q, c0r, c1r);
    *v1 = ks_acc_value(a.a1, q, c0r, c1r);
}
#else
/* One hoisted rotation's words at extended limb o, output word y, as ks_inner_sums_u64 loads
 * them (one rotation ahead: KS_SUMS_MIN_BLOCKS); `has` bit s: sum s has a term of this rotation. */
typedef struct {
    DWORD v[KS_DIGITS], k0[KS_DIGITS], k1[KS_DIGITS], c, dv[KS_SUMS];
    u32 has;
} ks_rot_words_t;

/* Rotation `desc`'s words: the ModUp rows and key words at the gathered index, the data word,
 * the diagonals' words at y. */
DECLSPEC void ks_rot_load(ks_rot_words_t *w, CONST_AS u64 *desc, u64 y, u32 log_n, u64 lim, u32 own, u32 data, u32 ki,
                          u32 key_k, u32 j0, CONST_AS DWORD *rows, CONST_AS DWORD *ct, CONST_AS DWORD *c1)
{
    CONST_AS DWORD *key = (CONST_AS DWORD *)desc[0];
    u64 x = ks_galois_index(y, (u32)desc[1], log_n);
#pragma unroll
    for (u32 j = 0; j < KS_DIGITS; j++) {
        w->v[j] = j == own ? c1[lim + x] : rows[((u64)(j > own ? j - 1 : j) << log_n) + x];
        u64 kb = (((u64)(j0 + j) * 2) * key_k + ki) << log_n;
        w->k0[j] = key[kb + x];
        w->k1[j] = key[kb + ((u64)key_k << log_n) + x];
    }
    w->c = data ? ct[lim + x] : 0;
    w->has = 0;
#pragma unroll
    for (u32 s = 0; s < KS_SUMS; s++) {
        CONST_AS DWORD *diag = (CONST_AS DWORD *)desc[2 + s];
        w->dv[s] = diag != 0 ? diag[lim + y] : 0;
        w->has |= (diag != 0 ? 1u : 0u) << s;
    }
}

/* The rotation's value (v0, v1) from its loaded words: sum_j U_j K'_j (+ c0 [P] on a data limb). */
DECLSPEC void ks_rot_value(u64 *v0, u64 *v1, const ks_rot_words_t *w, u32 data, u64 pm, u64 q, u64 c0r, u64 c1r)
{
    ks_acc2_t a = ks_acc2_zero();
#pragma unroll
    for (u32 j = 0; j < KS_DIGITS; j++) a = ks_acc2_add(a, w->v[j], w->k0[j], w->k1[j], q, c0r, c1r);
    if (data) a = ks_acc2_add(a, w->c, pm, 0, q, c0r, c1r);
    *v0 = ks_acc_value(a.a0, q, c0r, c1r);
    *v1 = ks_acc_value(a.a1, q, c0r, c1r);
}
#endif

/* acc[s] += diag_s[lim + y] · (v0, v1) for the sums whose diagonal address (desc[s]) is set. */
#define KS_SUMS_ADD(desc, v0, v1)                                                                                      \
    _Pragma("unroll") for (u32 s = 0; s < KS_SUMS; s++)                                                                \
    {                                                                                                                  \
        CONST_AS DWORD *diag = (CONST_AS DWORD *)(desc)[s];                                                            \
        if (diag != 0) {                                                                                               \
            u64 dv = diag[lim + y];                                                                                    \
            acc[s][0] = mac_add(acc[s][0], v0, dv, q, c1r);                                                            \
            acc[s][1] = mac_add(acc[s][1], v1, dv, q, c1r);                                                            \
        }                                                                                                              \
    }

/*
 * Double hoisting's baby steps and diagonal products in one pass (CUDA only: the table holds
 * device addresses): for each sum s < KS_SUMS, over the extended limbs o < ell + alpha,
 *   out_s[c][o][y] = sum_r diag_{s,r}[o][y] * rot_r[c][o][y]  (mod q_o),
 * where rot_r is hoisted rotation r of the ciphertext ct left in the extended base, times P:
 *   rot_r[c][o][y] = sum_j U_j[o][x] * K'_{r,j,c}[o][x]  (+ c0[o][x] * [P]_{q_o} for c = 0 on a
 *   data limb), x = ks_galois_index(y, elt_r),
 * U_j the ModUp rows of c1 = ct[ell..2 ell) (as ks_inner_hybrid_u64 reads them, the own digit
 * from c1 itself), K' the key stored permuted by the inverse automorphism (so K'[x] is the key
 * at y: the products are gathered here where ks_inner_hybrid_u64 with KS_ROTATE scatters them;
 * the automorphism keeps aligned blocks of 2^b words together, so a warp's gathers fill whole
 * sectors). Table entry r < nrots (KS_ROT_DESC words): key address, Galois element, then per sum
 * the diagonal's address (the plaintext on the data primes then the special primes,
 * (ell + alpha) x N words, NTT form) or 0 where the sum has no term of rotation r. ident: the
 * identity's diagonals (KS_SUMS addresses or 0) when has_ident, rot = c * [P]_{q_o} on the data
 * limbs, 0 on the special limbs. Each rotation word is reduced, then the sums run as mac_t (modarith.h) and are reduced once:
 * modular sums in any grouping are the same words, so the result equals the separate rotations
 * and products (Evaluator::apply_galois_hybrid_many_ext then multiply_plain_sum_ext) word for
 * word, without their (ell + alpha)-row intermediates crossing DRAM. out_s: 2 x ell rows (c0,
 * c1 on the data limbs) then 2 x alpha rows (special limbs), at out + s * 2 * (ell + alpha) * N.
 */
/* CTAs of 256 work-items each SM must hold. The kernel is bound by the latency of its gathered
 * loads (ncu: 8.8e2 GB/s of DRAM at 12.5 % occupancy and 130 registers, two rotations a step),
 * so whole keys load rotation r + 1's words before rotation r's products (ks_rot_load): two
 * rotations' words in registers. 32-bit words fit them at 3 CTAs; 64-bit words need 2 (at 3
 * they spill). Compact keys fill their uniform halves through shared memory a group at a time
 * and load as they go, at 3. A/B: BENCHMARKS.md, Bootstrapping. */
#if KS_COMPACT || XEHE_WORD32
#define KS_SUMS_MIN_BLOCKS 3
#else
#define KS_SUMS_MIN_BLOCKS 2
#endif
extern "C" __global__ void __launch_bounds__(256, KS_SUMS_MIN_BLOCKS) ks_inner_sums_u64(GLOBAL_AS DWORD *out, CONST_AS u64 *rots, u32 nrots, CONST_AS u64 *ident,
                                 u32 has_ident, CONST_AS DWORD *up_q, CONST_AS DWORD *up_p, CONST_AS DWORD *ct,
                                 CONST_AS u64 *p_mod, CONST_AS u64 *out_moduli, CONST_AS u64 *out_r0,
                                 CONST_AS u64 *out_r1, u32 digits, u32 d, u32 ell, u32 alpha, u32 key_k, u32 row0,
                                 u32 log_n)
{
    u64 n = (u64)1 << log_n;
    u32 e = ell + alpha;
    u64 total = (u64)e << log_n;
    CONST_AS DWORD *c1 = ct + ((u64)ell << log_n);
#if KS_COMPACT
    LOCAL_ARRAY(u64, kw, KS_DIGITS * KS_GROUP);
#endif
    for (u64 g = GLOBAL_ID(); g < total; g += GLOBAL_SIZE()) {
        u32 o = (u32)(g >> log_n);
        u64 y = g & (n - 1);
        u32 data = o < ell;
        u32 ki = data ? row0 + o : o + key_k - e;
        u32 own = data ? (o + row0 % d) / d : digits;
        u32 j0 = row0 / d;
        u64 lim = (u64)o << log_n;
        CONST_AS DWORD *rows = data ? up_q + (((u64)o * (digits - 1)) << log_n) : up_p + (((u64)(o - ell) * digits) << log_n);
        u64 q = out_moduli[o], c0r = out_r0[o], c1r = out_r1[o];
        u64 pm = data ? p_mod[o] : 0;
        mac_t acc[KS_SUMS][2];
#pragma unroll
        for (u32 s = 0; s < KS_SUMS; s++) acc[s][0] = acc[s][1] = mac_zero();
        if (has_ident && data) {
            u64 v0 = mul_mod(ct[lim + y], pm, q, c0r, c1r), v1 = mul_mod(c1[lim + y], pm, q, c0r, c1r);
            KS_SUMS_ADD(ident, v0, v1)
        }
#if KS_COMPACT
        for (u32 r = 0; r < nrots; r++) {
            CONST_AS u64 *desc = rots + (u64)r * KS_ROT_DESC;
            u64 v0, v1;
            /* The rotation's key words at the group's 256 outputs (uniform o, ki, y & ~255). */
            ks_compact_fill(kw, (CONST_AS u64 *)desc[0], key_k, j0, ki, y & ~(u64)(KS_GROUP - 1), log_n);
            ks_rot_word(&v0, &v1, desc, y, log_n, lim, own, data, ki, key_k, j0, rows, ct, c1, pm, q, c0r, c1r, kw);
            KS_SUMS_ADD(desc + 2, v0, v1)
        }
#else
        ks_rot_words_t cur, nxt;
        if (nrots) ks_rot_load(&cur, rots, y, log_n, lim, own, data, ki, key_k, j0, rows, ct, c1);
        nxt = cur;
        for (u32 r = 0; r < nrots; r++) {
            if (r + 1 < nrots)
                ks_rot_load(&nxt, rots + (u64)(r + 1) * KS_ROT_DESC, y, log_n, lim, own, data, ki, key_k, j0, rows, ct, c1);
            u64 v0, v1;
            ks_rot_value(&v0, &v1, &cur, data, pm, q, c0r, c1r);
#pragma unroll
            for (u32 s = 0; s < KS_SUMS; s++) {
                if (cur.has >> s & 1) {
                    acc[s][0] = mac_add(acc[s][0], v0, cur.dv[s], q, c1r);
                    acc[s][1] = mac_add(acc[s][1], v1, cur.dv[s], q, c1r);
                }
            }
            cur = nxt;
        }
#endif
        u64 row = data ? lim : (u64)(o - ell) << log_n;
        u64 comp = data ? (u64)ell << log_n : (u64)alpha << log_n;
#pragma unroll
        for (u32 s = 0; s < KS_SUMS; s++) {
            GLOBAL_AS DWORD *dst = out + (u64)s * 2 * total + (data ? 0 : (u64)2 * ell << log_n) + row;
            dst[y] = (DWORD)mac_value(acc[s][0], q, c0r, c1r);
            dst[comp + y] = (DWORD)mac_value(acc[s][1], q, c0r, c1r);
        }
    }
}
#endif /* IS_CUDA */
