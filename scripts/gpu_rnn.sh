#!/usr/bin/env bash
# The recurrent-network GPU pass: train the 128-unit LSTM on sequential Fashion-MNIST when
# models/lstm128.onnx is missing (python/examples/train_rnn.py, PyTorch on the GPU; the model,
# card and reference logits written to $OUT/models), then `xehe infer` on COUNT test sequences
# at N16-dense on CUDA, 32 sequences a ciphertext, the first step's first K circuit steps again
# on the CPU backend and compared word for word, nvidia-smi sampled.
#
# Build here, stripped into .gpu-bin (carried) with the data set's IDX files in
# .gpu-bin/fashion-mnist (the whole training set: the LSTM trains on it):
#   cargo build --release --bin xehe && cp target/release/xehe .gpu-bin/ && strip .gpu-bin/xehe
# then on the GPU machine: scripts/gpu_rnn.sh [BIN_DIR] [COUNT] [SKIP]. Logs go to $OUT (or /tmp).
set -uo pipefail
BIN=${1:-.gpu-bin}
COUNT=${2:-64}
SKIP=${3:-0}
LOG=${OUT:-/tmp}
source "$(dirname "$0")/cuda_env.sh"
MODEL=models/lstm128.onnx
if [ ! -f "$MODEL" ]; then
  mkdir -p "$LOG/models"
  (cd python/examples && python3 train_rnn.py --data "../../$BIN/fashion-mnist" --out "$LOG/models" --models lstm128) 2>&1 | grep -v Warning | tee "$LOG/train_lstm128.log"
  MODEL=$LOG/models/lstm128.onnx
fi
( while sleep 0.5; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null; done ) > "$LOG/memory_lstm128.log" &
sampler=$!
/usr/bin/time -v "$BIN/xehe" infer --model "$MODEL" --data fashion-mnist --sequence --fashion-mnist "$BIN/fashion-mnist" \
  --count "$COUNT" --skip "$SKIP" --preset n16-dense --device cuda --compare-cpu --compare-steps "${COMPARE_STEPS:-6}" --json \
  > "$LOG/infer_lstm128.json" 2> "$LOG/infer_lstm128.log"
status=$?
kill $sampler 2>/dev/null
tail -5 "$LOG/infer_lstm128.log"
grep -E "Maximum resident" "$LOG/infer_lstm128.log"
echo "peak device memory used (MiB, nvidia-smi, whole GPU): $(sort -n "$LOG/memory_lstm128.log" | tail -1)"
exit $status
