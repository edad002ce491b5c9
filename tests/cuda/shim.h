/*
 * What NVRTC provides without headers, declared for clang's CUDA front end (tests/cuda_syntax.rs:
 * a type check of the kernels' CUDA dialect where no CUDA toolkit is installed). Declarations
 * only: nothing here is compiled to code.
 */
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __CUDACC_RTC__ 1
struct xehe_dim3 { unsigned x, y, z; };
extern const __device__ xehe_dim3 blockIdx, threadIdx, blockDim, gridDim;
extern "C" __device__ void __syncthreads();
__device__ unsigned long long __umul64hi(unsigned long long, unsigned long long);
__device__ unsigned int __umulhi(unsigned int, unsigned int);
__device__ int __clzll(long long);
__device__ unsigned __brev(unsigned);
__device__ unsigned __byte_perm(unsigned, unsigned, unsigned);
__device__ unsigned __shfl_xor_sync(unsigned, unsigned, int);
__device__ unsigned long long __shfl_xor_sync(unsigned, unsigned long long, int);
__device__ double __dsub_rn(double, double);
__device__ double __dadd_rn(double, double);
__device__ double __dmul_rn(double, double);
__device__ double __fma_rn(double, double, double);
__device__ double __longlong_as_double(long long);
__device__ long long __double_as_longlong(double);
__device__ double round(double);
__device__ double fabs(double);
__device__ double floor(double);
__device__ double ldexp(double, int);
__device__ int signbit(double);
struct uint2 { unsigned x, y; };
struct uint4 { unsigned x, y, z, w; };
struct ulonglong2 { unsigned long long x, y; };
struct ulonglong4 { unsigned long long x, y, z, w; };
