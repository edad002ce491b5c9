/*
 * portable.h — one kernel dialect for CUDA (NVRTC) and OpenCL C (paper §IV-A/B; the way
 * hashcat's inc_vendor.h builds one source for several runtimes).
 *
 * Dialect from the compiler's own macros: __CUDACC_RTC__/__CUDACC__ -> IS_CUDA, else IS_OPENCL.
 * Kernels use only the macros below for qualifiers, ids, barriers and local memory.
 * XEHE_NO_ASM=1 turns every vendor inline-assembly fast path off (portable C only).
 */
#ifndef XEHE_PORTABLE_H
#define XEHE_PORTABLE_H

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define IS_CUDA 1
typedef unsigned long long u64;
typedef unsigned int u32;
#define KERNEL_FQ extern "C" __global__
#define GLOBAL_AS
#define CONST_AS
#define DECLSPEC __device__ __forceinline__
#define DECLSPEC_INLINE __device__ __forceinline__
#define LOCAL_ARRAY(type, name, size) __shared__ type name[size]
#define LOCAL_AS
/* A pointer argument no other argument aliases (loads may move across stores). */
#define RESTRICT __restrict__
#define SYNC_THREADS() __syncthreads()
#define GLOBAL_ID() ((u64)blockIdx.x * blockDim.x + threadIdx.x)
#define GLOBAL_SIZE() ((u64)gridDim.x * blockDim.x)
#define LOCAL_ID() (threadIdx.x)
#define LOCAL_SIZE() (blockDim.x)
#define GROUP_ID() (blockIdx.x)
#define GROUP_ID_Y() (blockIdx.y)
#else
#define IS_OPENCL 1
typedef ulong u64;
typedef uint u32;
#define KERNEL_FQ __kernel
#define GLOBAL_AS __global
#define CONST_AS __global const
/* static: C99 `inline` alone emits no definition, so an un-inlined call (e.g. at -O0 or in
 * SPIR-V) would be an unresolved import. OpenCL C 1.2+ allows static functions. */
#define DECLSPEC static inline
/* Always inlined: helpers taking a compile-time radix, so their loops unroll. */
#define DECLSPEC_INLINE static inline __attribute__((always_inline))
#define LOCAL_ARRAY(type, name, size) __local type name[size]
#define LOCAL_AS __local
#define RESTRICT restrict
#define SYNC_THREADS() barrier(CLK_LOCAL_MEM_FENCE)
#define GLOBAL_ID() ((u64)get_global_id(0))
#define GLOBAL_SIZE() ((u64)get_global_size(0))
#define LOCAL_ID() ((u32)get_local_id(0))
#define LOCAL_SIZE() ((u32)get_local_size(0))
#define GROUP_ID() ((u32)get_group_id(0))
#define GROUP_ID_Y() ((u32)get_group_id(1))
#endif

#ifndef XEHE_NO_ASM
#define XEHE_NO_ASM 0
#endif

/* v, opaque to the compiler's algebra (CUDA): a constant derived from another (2q, -q) stays in
 * its own register instead of being folded back into each use (q * -hi costs a negation more
 * than hi * nq, u + (q << 1) - v an add more than u + two_q - v). */
#if IS_CUDA
__device__ __forceinline__ u32 opaque32(u32 v)
{
    u32 r;
    asm("mov.b32 %0, %1;" : "=r"(r) : "r"(v));
    return r;
}
#else
#define opaque32(v) (v)
#endif

/*
 * Intel-only inline vISA fast paths (paper §V-A2; modarith.h). The host defines
 * XEHE_INTEL_VISA=1 only for Intel's GPU OpenCL compiler (vendor 0x8086 and a GPU device, with
 * XEHE_NO_ASM unset); CUDA, pocl, other OpenCL drivers and the SPIR-V build never get it, and
 * it is forced off under CUDA or XEHE_NO_ASM. vISA operands are SIMD vectors, so the kernels
 * are pinned to sub-groups of XEHE_VISA_SIMD work-items (the asm's execution size).
 * NOTE: never compiled by Intel's compiler in this project (no Intel GPU was reachable).
 */
#ifndef XEHE_INTEL_VISA
#define XEHE_INTEL_VISA 0
#endif
#if XEHE_INTEL_VISA && (IS_CUDA || XEHE_NO_ASM)
#undef XEHE_INTEL_VISA
#define XEHE_INTEL_VISA 0
#endif
#if XEHE_INTEL_VISA
#ifndef XEHE_VISA_SIMD
#define XEHE_VISA_SIMD 16
#endif
#undef KERNEL_FQ
#define KERNEL_FQ __kernel __attribute__((intel_reqd_sub_group_size(XEHE_VISA_SIMD)))
#endif

/*
 * Sub-group (warp) shuffles. The host passes XEHE_SUBGROUPS=1 where the device has them
 * (OpenCL: cl_khr_subgroups or cl_intel_subgroups); CUDA warps always do. A kernel that
 * shuffles must keep a local-memory path for XEHE_SUBGROUPS == 0 (pocl, the SPIR-V build).
 */
#ifndef XEHE_SUBGROUPS
#if IS_CUDA
#define XEHE_SUBGROUPS 1
#else
#define XEHE_SUBGROUPS 0
#endif
#endif

/*
 * SUB_GROUP_SHUFFLE_XOR(v, mask): the u64 `v` of the lane whose sub-group lane id is this
 * lane's xor `mask` (CUDA: __shfl_xor_sync over the full warp; OpenCL: cl_khr_subgroup_shuffle
 * or cl_intel_subgroups). XEHE_SHUFFLE says whether it exists; kernels keep a local-memory
 * exchange for XEHE_SHUFFLE == 0 and must call it from converged control flow.
 */
#if IS_CUDA
#define XEHE_SHUFFLE 1
#define SUB_GROUP_SHUFFLE_XOR(v, mask) __shfl_xor_sync(0xffffffffu, (v), (int)(mask))
#define SUB_GROUP_MAX_SIZE() 32u
#elif XEHE_SUBGROUPS && defined(cl_khr_subgroup_shuffle)
#pragma OPENCL EXTENSION cl_khr_subgroup_shuffle : enable
#define XEHE_SHUFFLE 1
#define SUB_GROUP_SHUFFLE_XOR(v, mask) sub_group_shuffle_xor((v), (uint)(mask))
#define SUB_GROUP_MAX_SIZE() ((u32)get_max_sub_group_size())
#elif XEHE_SUBGROUPS && defined(cl_intel_subgroups)
#define XEHE_SHUFFLE 1
#define SUB_GROUP_SHUFFLE_XOR(v, mask) intel_sub_group_shuffle_xor((v), (uint)(mask))
#define SUB_GROUP_MAX_SIZE() ((u32)get_max_sub_group_size())
#else
#define XEHE_SHUFFLE 0
#endif

/* Leading zero bits of a 64-bit word (64 for 0). */
DECLSPEC u32 clz64(u64 a)
{
#if IS_CUDA
    return (u32)__clzll((long long)a);
#else
    return (u32)clz(a);
#endif
}

/* High 32 bits of a 32x32 product (one multiply on GPUs). */
DECLSPEC u32 mulhi32(u32 a, u32 b)
{
#if IS_CUDA
    return __umulhi(a, b);
#else
    return mul_hi(a, b);
#endif
}

/* High 64 bits of a 64x64 product. */
DECLSPEC u64 mulhi64(u64 a, u64 b)
{
#if IS_CUDA
    return __umul64hi(a, b);
#else
    return mul_hi(a, b);
#endif
}

#endif /* XEHE_PORTABLE_H */
