#!/usr/bin/env bash
# The C++ SEAL plugin's bootstrapping on a GPU: examples/cpp_seal_bootstrap (a SEAL 4.0 program
# three times deeper than its modulus chain, SEAL's own evaluator between bootstraps, the plugin's
# Bootstrapper whenever the levels run out) with --gpu, then the same program on the CPU backend
# for comparison (precision printed by both).
#
# Build here (the GPU machines have no Rust toolchain and no network; the example links SEAL
# statically and libxehe.so through LD_LIBRARY_PATH):
#   cargo test --release --test capi_examples cpp_seal_bootstrap   # SEAL 4.0 and the example, in target/tmp
#   mkdir -p .gpu-bin/cpp && cp target/release/libxehe.so \
#     target/tmp/capi-cpp-seal-bootstrap-example/xehe_cpp_seal_bootstrap .gpu-bin/cpp/ && strip .gpu-bin/cpp/*
# then on the GPU machine (carry .gpu-bin/cpp): scripts/gpu_cpp_seal_bootstrap.sh [BIN_DIR].
# Logs go to $OUT (or /tmp).
set -uo pipefail
BIN=${1:-.gpu-bin/cpp}
LOG=${OUT:-/tmp}
source "$(dirname "$0")/cuda_env.sh"
export LD_LIBRARY_PATH="$BIN:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv 2>/dev/null || echo "nvidia-smi not available"
status=0
XEHE_DEVICE=${XEHE_DEVICE:-cuda} "$BIN/xehe_cpp_seal_bootstrap" --gpu 2>&1 | tee "$LOG/cpp_seal_bootstrap_gpu.log" || status=1
"$BIN/xehe_cpp_seal_bootstrap" 2>&1 | tee "$LOG/cpp_seal_bootstrap_cpu.log" || status=1
exit $status
