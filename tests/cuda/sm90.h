/*
 * Compute capability 9.0 for the type check of the thread-block-cluster kernels
 * (tests/cuda_syntax.rs): clang's CUDA front end here targets an older GPU, so the arch macro is
 * raised and the cluster attribute, which only NVRTC needs, is declared away. The inline PTX is
 * not assembled by a syntax check.
 */
#undef __CUDA_ARCH__
#define __CUDA_ARCH__ 900
#define __cluster_dims__(...)
