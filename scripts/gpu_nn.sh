#!/usr/bin/env bash
# The encrypted-inference GPU pass: tests/nn on the device (the small CNN at N = 2^12, the device
# result against the CPU backend's word for word), then `xehe infer` with the small CNN on
# Fashion-MNIST test images — the insecure N = 2^12 set and the production N16-dense set — on
# CUDA, the first image again on the CPU backend and compared word for word.
#
# Build here (the GPU machines have no Rust toolchain and no network), stripped into .gpu-bin
# (carried), with the data set's IDX files in .gpu-bin/fashion-mnist (scripts/gpu_train.sh says
# how to get them):
#   cargo build --release --bin xehe --tests
#   cp target/release/xehe .gpu-bin/ && cp $(ls -t target/release/deps/nn-* | grep -v '\.d$' | head -1) .gpu-bin/nn
#   strip .gpu-bin/xehe .gpu-bin/nn
# then on the GPU machine: scripts/gpu_nn.sh [BIN_DIR] [COUNT]. Logs go to $OUT (or /tmp).
set -uo pipefail
BIN=${1:-.gpu-bin}
COUNT=${2:-20}
LOG=${OUT:-/tmp}
source "$(dirname "$0")/cuda_env.sh"
status=0
# tests/nn reads the data set where Debian installs it.
mkdir -p /usr/share/datasets && cp -r "$BIN/fashion-mnist" /usr/share/datasets/ 2>/dev/null
[ -x "$BIN/nn" ] && { "$BIN/nn" --test-threads 1 --nocapture 2>&1 | tee "$LOG/nn_test.log" || status=1; }
for preset in n12-insecure n16-dense; do
  ( while sleep 0.1; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null; done ) > "$LOG/memory_$preset.log" &
  sampler=$!
  "$BIN/xehe" infer --model models/small-poly.onnx --data fashion-mnist --fashion-mnist "$BIN/fashion-mnist" \
    --count "$COUNT" --preset $preset --device cuda --compare-cpu 2>&1 | tee "$LOG/infer_$preset.log" || status=1
  kill $sampler 2>/dev/null
  echo "peak device memory used (MiB, nvidia-smi, whole GPU): $(sort -n "$LOG/memory_$preset.log" | tail -1)"
done
exit $status
