#!/usr/bin/env bash
# Device memory budgets on one GPU, in one call (BENCHMARKS.md, Device memory): `xehe bench
# bootstrap --n 65536` without a budget and under 24, 12 and 8 GiB (nvidia-smi every 100 ms: the
# whole GPU's peak), then ResNet-20 through scripts/gpu_resnet.sh — with ReLU under 24 GiB (the
# first 12 steps compared with the CPU backend) and 16 GiB, the quadratic network under 24 GiB.
#
# Build here (the GPU machines have no Rust toolchain), then carry .gpu-bin:
#   cargo build --release --bin xehe && mkdir -p .gpu-bin && cp target/release/xehe .gpu-bin/ &&
#   strip .gpu-bin/xehe && cp -r /usr/share/datasets/fashion-mnist .gpu-bin/
# then on the GPU machine: scripts/gpu_budget.sh [BIN_DIR] [IMAGES]. Logs go to $OUT (or /tmp),
# one folder a run.
set -uo pipefail
BIN=${1:-.gpu-bin}
IMAGES=${2:-5}
LOG=${OUT:-/tmp}
source "$(dirname "$0")/cuda_env.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null || echo "nvidia-smi not available"
unset XEHE_DEVICE_MEMORY
status=0
for budget in none 24GiB 12GiB 8GiB; do
  dir="$LOG/bootstrap-$budget"
  mkdir -p "$dir"
  ( while sleep 0.1; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null; done ) > "$dir/memory.log" &
  sampler=$!
  limit=()
  [ "$budget" != none ] && limit=(--device-memory "$budget")
  "$BIN/xehe" bench bootstrap --n 65536 --device cuda --reps 5 ${limit[@]+"${limit[@]}"} > "$dir/bench.log" 2>&1 || status=1
  kill $sampler 2>/dev/null
  echo "== bootstrap, budget $budget"
  grep -E "device memory at its peak|^total|precision|error" "$dir/bench.log"
  echo "peak device memory used (MiB, nvidia-smi, whole GPU): $(sort -n "$dir/memory.log" | tail -1)"
done
# MODEL:BUDGET:STEPS (STEPS: the first steps compared with the CPU backend; 0: none).
for run in resnet20-relu:24GiB:12 resnet20-relu:16GiB:0 resnet20-poly:24GiB:0; do
  IFS=: read -r model budget steps <<< "$run"
  dir="$LOG/$model-$budget"
  mkdir -p "$dir"
  echo "== $model, budget $budget"
  OUT="$dir" XEHE_DEVICE_MEMORY=$budget "$(dirname "$0")/gpu_resnet.sh" "$BIN" "$model" "$IMAGES" "$steps" 6000 1 || status=1
done
exit $status
