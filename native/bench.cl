/*
 * bench.cl — microbenchmarks for the ceilings NTT results are reported against:
 * 64-bit modular-multiply throughput (Shoup, as in NTT butterflies; Barrett, as in dyadic
 * products). Four independent dependency chains per thread keep the multipliers busy.
 */
#include "modarith.h"

KERNEL_FQ void bench_mulmod_shoup_u64(GLOBAL_AS u64 *out, u64 q, u64 w, u64 wq, u32 iters)
{
    u64 id = GLOBAL_ID();
    u64 a0 = id % q, a1 = (id * 3 + 1) % q, a2 = (id * 5 + 2) % q, a3 = (id * 7 + 3) % q;
    for (u32 i = 0; i < iters; i++) {
        a0 = mul_shoup_lazy(a0, w, wq, q);
        a1 = mul_shoup_lazy(a1, w, wq, q);
        a2 = mul_shoup_lazy(a2, w, wq, q);
        a3 = mul_shoup_lazy(a3, w, wq, q);
    }
    out[id] = a0 ^ a1 ^ a2 ^ a3;
}

KERNEL_FQ void bench_mulmod_barrett_u64(GLOBAL_AS u64 *out, u64 q, u64 r0, u64 r1, u64 b, u32 iters)
{
    u64 id = GLOBAL_ID();
    u64 a0 = id % q, a1 = (id * 3 + 1) % q, a2 = (id * 5 + 2) % q, a3 = (id * 7 + 3) % q;
    for (u32 i = 0; i < iters; i++) {
        a0 = mul_mod(a0, b, q, r0, r1);
        a1 = mul_mod(a1, b, q, r0, r1);
        a2 = mul_mod(a2, b, q, r0, r1);
        a3 = mul_mod(a3, b, q, r0, r1);
    }
    out[id] = a0 ^ a1 ^ a2 ^ a3;
}
