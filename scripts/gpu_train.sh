#!/usr/bin/env bash
# The training GPU pass: HELR iterations and refreshes on the device against the CPU
# backend word for word (tests/helr_gpu, the insecure N = 2^12 set), then `xehe demo train` in
# HELR's benchmark shape — Fashion-MNIST, two classes at 14×14, mini-batches of 1024 samples ×
# 256 feature slots, the N = 2^16 preset — for 30 iterations, its first 3 iterations (one
# refresh) run again on the CPU backend and compared word for word, the curves drawn into
# $OUT/train.png.
#
# Build here (the GPU machines have no Rust toolchain and no network), stripped into .gpu-bin
# (carried), with the data set's IDX files in .gpu-bin/fashion-mnist (Debian's
# dataset-fashion-mnist: `apt-get download dataset-fashion-mnist && dpkg -x *.deb d`, then copy
# d/usr/share/datasets/fashion-mnist):
#   cargo build --release --bin xehe --tests
#   cp target/release/xehe .gpu-bin/ && cp $(ls -t target/release/deps/helr_gpu-* | grep -v '\.d$' | head -1) .gpu-bin/helr_gpu
#   strip .gpu-bin/xehe .gpu-bin/helr_gpu
# then on the GPU machine: scripts/gpu_train.sh [BIN_DIR]. Logs go to $OUT (or /tmp).
set -uo pipefail
BIN=${1:-.gpu-bin}
LOG=${OUT:-/tmp}
source "$(dirname "$0")/cuda_env.sh"
status=0
[ -x "$BIN/helr_gpu" ] && { "$BIN/helr_gpu" --test-threads 1 2>&1 | tee "$LOG/helr_gpu.log" || status=1; }
( while sleep 0.1; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null; done ) > "$LOG/memory_train.log" &
sampler=$!
"$BIN/xehe" demo train --data fashion-mnist --fashion-mnist "$BIN/fashion-mnist" --n 65536 \
  --iterations ${TRAIN_ITERATIONS:-30} --compare-cpu ${TRAIN_COMPARE:-3} --device cuda --plot "$LOG/train.png" 2>&1 | tee "$LOG/train.log" || status=1
kill $sampler 2>/dev/null
echo "peak device memory used (MiB, nvidia-smi, whole GPU): $(sort -n "$LOG/memory_train.log" | tail -1)"
exit $status
