#!/usr/bin/env bash
# One whole GPU check-and-measure pass: bit-exactness of every GPU kernel against the CPU
# backend (CUDA and, where present, NVIDIA's OpenCL), then the ceilings and timing sweeps
# (NTT family, evaluator operations, element-wise coalescing, hybrid key switching, batches).
#
# Build here (the GPU machines have no Rust toolchain):
#   cargo build --release --examples
# then on a machine with an NVIDIA GPU:
#   scripts/gpu_pass.sh [BIN_DIR]        (default target/release/examples)
# Logs go to $OUT (or /tmp) as gpu_check.log.
set -uo pipefail
BIN=${1:-target/release/examples}
LOG=${OUT:-/tmp}
source "$(dirname "$0")/cuda_env.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv 2>/dev/null || echo "nvidia-smi not available"
status=0
"$BIN/gpu_check" 2>&1 | tee "$LOG/gpu_check.log" || status=1
"$BIN/gpu_eval_check" 2>&1 | tee "$LOG/gpu_eval_check.log" || status=1
"$BIN/hybrid_gpu_timing" 2>&1 | tee "$LOG/hybrid_gpu_timing.log" || status=1
"$BIN/batch_timing" --backend cuda 2>&1 | tee "$LOG/batch_timing.log" || status=1
XEHE_DEVICE=cuda "$BIN/host_path" 2>&1 | tee "$LOG/host_path.log" || status=1
"$BIN/hoisting_timing" 2>&1 | tee "$LOG/hoisting_timing.log" || status=1
# XEHE_NCU=1: per-kernel device time of every evaluator operation (Nsight Compute, no clock or
# cache control; the profiler's own event times include host launch gaps for small kernels).
if [ "${XEHE_NCU:-0}" = 1 ] && command -v ncu >/dev/null; then
  ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
    "$BIN/gpu_eval_check" --backend cuda --kernels-only > "$LOG/ncu_kernels.csv" 2>&1 || status=1
fi
exit $status
