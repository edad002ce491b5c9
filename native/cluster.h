/*
 * cluster.h — Hopper thread-block clusters (CUDA sm_90+): a CTA's rank in its cluster, the
 * distributed shared memory of the cluster's CTAs (loads and stores at another CTA's shared
 * array) and the cluster barrier, in inline PTX. Used by the one-pass cluster NTTs of ntt.cl
 * (64-bit tiles) and ntt32.cl (32-bit tiles); defined only where they compile.
 */
#ifndef XEHE_CLUSTER_H
#define XEHE_CLUSTER_H

#if IS_CUDA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/* This CTA's rank in its cluster. */
DECLSPEC u32 cluster_rank(void)
{
    u32 r;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

/* The shared::cluster address of byte 0 of `tile` (this CTA's shared array) in CTA `rank`. */
DECLSPEC u32 cluster_tile(const void *tile, u32 rank)
{
    u32 a, r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"((u64)tile));
    asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
    return r;
}

DECLSPEC void cluster_st(u32 addr, u64 v)
{
    asm volatile("st.shared::cluster.u64 [%0], %1;" ::"r"(addr), "l"(v) : "memory");
}

DECLSPEC u64 cluster_ld(u32 addr)
{
    u64 v;
    asm volatile("ld.shared::cluster.u64 %0, [%1];" : "=l"(v) : "r"(addr) : "memory");
    return v;
}

DECLSPEC void cluster_st32(u32 addr, u32 v)
{
    asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}

DECLSPEC u32 cluster_ld32(u32 addr)
{
    u32 v;
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

/* Barrier of every work-item of the cluster; shared-memory writes before it are visible after. */
DECLSPEC void cluster_sync(void)
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
#endif

#endif /* XEHE_CLUSTER_H */
