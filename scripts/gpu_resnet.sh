#!/usr/bin/env bash
# ResNet-20 on encrypted Fashion-MNIST on one GPU: `xehe infer` over COUNT test images at
# N16-dense, the first image's first residual block compared with the CPU backend word for word
# (--compare-steps), device and host memory sampled (their peaks are the run's).
#
# Build here (the GPU machines have no Rust toolchain), then carry .gpu-bin:
#   cargo build --release --bin xehe && mkdir -p .gpu-bin && cp target/release/xehe .gpu-bin/ &&
#   strip .gpu-bin/xehe && cp -r /usr/share/datasets/fashion-mnist .gpu-bin/
# then on the GPU machine: scripts/gpu_resnet.sh [BIN_DIR] [MODEL] [COUNT] [STEPS] [SKIP] [IN_FLIGHT].
# MODEL: resnet20-poly (default) or resnet20-relu; STEPS: the steps through the first residual
# block (6 for resnet20-poly: the stem and the first block's two convolutions, each with its activation;
# 18 for resnet20-relu, three bootstraps on the CPU; `cargo run --release --example nn_plan --
# models/MODEL.onnx n16` lists them), 0 for no comparison with the CPU backend; SKIP: test images
# passed over first (a run of 500 in two calls: COUNT 250, SKIP 0 then 250); IN_FLIGHT: afterwards
# the images again with that many in flight (1: not). A device memory budget comes from
# XEHE_DEVICE_MEMORY (e.g. 24GiB) and names the logs; more `xehe infer` options from INFER_ARGS
# (e.g. --step-times). Logs go to $OUT.
set -uo pipefail
BIN=${1:-.gpu-bin}
MODEL=${2:-resnet20-poly}
COUNT=${3:-500}
STEPS=${4:-6}
SKIP=${5:-0}
IN_FLIGHT=${6:-1}
LOG=${OUT:-/tmp}
TAG=$MODEL${XEHE_DEVICE_MEMORY:+-$XEHE_DEVICE_MEMORY}
source "$(dirname "$0")/cuda_env.sh"
mkdir -p /usr/share/datasets && cp -r "$BIN/fashion-mnist" /usr/share/datasets/ 2>/dev/null
( while sleep 0.5; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null; done ) > "$LOG/memory_$TAG.log" &
gpu=$!
( while sleep 2; do free -m | awk '/Mem/{print $3}'; done ) > "$LOG/host_memory_$TAG.log" &
host=$!
compare=()
[ "$STEPS" -gt 0 ] && compare=(--compare-cpu --compare-steps "$STEPS")
"$BIN/xehe" infer --model "models/$MODEL.onnx" --data fashion-mnist --fashion-mnist "$BIN/fashion-mnist" \
  --count "$COUNT" --skip "$SKIP" --in-flight "$IN_FLIGHT" --preset n16-dense --device cuda ${compare[@]+"${compare[@]}"} ${INFER_ARGS:-} --json \
  > "$LOG/infer_$TAG.json" 2> "$LOG/infer_$TAG.log"
status=$?
kill $gpu $host 2>/dev/null
grep -v "keys: [0-9]*/\|step [0-9]*/" "$LOG/infer_$TAG.log" | tail -5
echo "peak device memory used (MiB, nvidia-smi, whole GPU): $(sort -n "$LOG/memory_$TAG.log" | tail -1)"
echo "peak host memory used (MiB): $(sort -n "$LOG/host_memory_$TAG.log" | tail -1)"
exit $status
