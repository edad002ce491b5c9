#!/usr/bin/env bash
# The bootstrapping GPU pass: device results against the CPU backend word for word (the
# scheme extensions and a whole bootstrap of the insecure N = 2^12 preset: tests/bootstrapping_gpu,
# plus the hybrid and evaluator device suites), then `xehe bench bootstrap` at N = 2^12 and
# N = 2^16 (precision, stage times, the N = 2^16 result compared with the CPU backend's) with
# the device memory in use sampled by nvidia-smi every 100 ms (its peak is the run's).
#
# Build here (the GPU machines have no Rust toolchain), stripped into .gpu-bin (carried):
#   cargo build --release --bin xehe --tests
#   mkdir -p .gpu-bin && cp target/release/xehe .gpu-bin/ &&
#   for t in bootstrapping_gpu hybrid_gpu gpu; do cp $(ls -t target/release/deps/$t-* | grep -v '\.d$' | head -1) .gpu-bin/$t; done
#   strip .gpu-bin/*
# then on the GPU machine: scripts/gpu_bootstrap.sh [BIN_DIR]. Logs go to $OUT (or /tmp).
set -uo pipefail
BIN=${1:-.gpu-bin}
LOG=${OUT:-/tmp}
source "$(dirname "$0")/cuda_env.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv 2>/dev/null || echo "nvidia-smi not available"
status=0
for t in bootstrapping_gpu hybrid_gpu gpu; do
  [ -x "$BIN/$t" ] && { "$BIN/$t" --test-threads 1 2>&1 | tee "$LOG/$t.log" || status=1; }
done
"$BIN/xehe" bench bootstrap --n 4096 --device cuda --reps 5 --compare-cpu 2>&1 | tee "$LOG/bench_bootstrap_n12.log" || status=1
( while sleep 0.1; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null; done ) > "$LOG/memory_n16.log" &
sampler=$!
"$BIN/xehe" bench bootstrap --n 65536 --device cuda --reps 5 --compare-cpu 2>&1 | tee "$LOG/bench_bootstrap_n16.log" || status=1
kill $sampler 2>/dev/null
echo "peak device memory used (MiB, nvidia-smi, whole GPU): $(sort -n "$LOG/memory_n16.log" | tail -1)"
exit $status
