# Sourced by the GPU passes: the CUDA libraries on the library path (the toolkit's, else pip's
# NVRTC wheel when the toolkit's is not there) and the kernel cache folder.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
for d in $(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__file__))' 2>/dev/null); do
  for l in "$d"/cuda_nvrtc/lib "$d"/cu13/lib; do [ -d "$l" ] && export LD_LIBRARY_PATH="$l:${LD_LIBRARY_PATH:-}"; done
done
export XEHE_KERNEL_CACHE=${XEHE_KERNEL_CACHE:-/tmp/xehe-kernels}
