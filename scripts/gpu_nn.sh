#!/usr/bin/env bash
# The encrypted-inference GPU pass: tests/nn on the device (the small CNNs at N = 2^12, the
# device results against the CPU backend's word for word), then `xehe infer` on Fashion-MNIST
# test images on CUDA — small-poly with the insecure N = 2^12 set, small-poly and small-relu with
# the production N16-dense set — the first image again on the CPU backend and compared word for
# word, and at N16-dense the images again 4 in flight (images a second).
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
for run in small-poly:n12-insecure:1 small-poly:n16-dense:4 small-relu:n16-dense:4; do
  IFS=: read -r model preset inflight <<< "$run"
  ( while sleep 0.1; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null; done ) > "$LOG/memory_${model}_$preset.log" &
  sampler=$!
  "$BIN/xehe" infer --model models/$model.onnx --data fashion-mnist --fashion-mnist "$BIN/fashion-mnist" \
    --count "$COUNT" --preset $preset --device cuda --compare-cpu --in-flight $inflight 2>&1 | tee "$LOG/infer_${model}_$preset.log" || status=1
  kill $sampler 2>/dev/null
  echo "peak device memory used (MiB, nvidia-smi, whole GPU): $(sort -n "$LOG/memory_${model}_$preset.log" | tail -1)"
done
exit $status
