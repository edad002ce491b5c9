#!/usr/bin/env bash
# The word-size path on one GPU, in one or two calls (docs/guide/bootstrapping.md, Word-size
# primes): the NTT by word size, the 32-bit kernels against their 64-bit layout, the
# N16-dense-w32 bootstrap on 32-bit and on 64-bit data words (checked against the CPU, every
# input shape), N16-dense beside it, and Cheddar's 32- and 64-bit sets in the same call. Each
# step prints its log's summary, the whole GPU's peak (nvidia-smi every 0.2 s) and the host's
# peak RSS.
#
# Build here (the GPU machines have no Rust toolchain), then carry BIN_DIR (default .gpu-bin):
#   cargo build --release --bin xehe && cargo test --release --test word32_kernels --test ntt32_gpu --no-run
#   mkdir -p .gpu-bin && cp target/release/xehe .gpu-bin/ && cp target/release/deps/word32_kernels-* .gpu-bin/word32_kernels
#   cp target/release/deps/ntt32_gpu-* .gpu-bin/ntt32_gpu  (the test binaries without the .d files)
#   (step seal-w32: also the seal_evaluator test binary, and a SEAL corpus of the 30-bit set:
#   python3 tests/seal/oracle.py gen .gpu-bin/seal-corpus, then sets.json cut to ["n8192w30"])
#   strip .gpu-bin/xehe .gpu-bin/word32_kernels .gpu-bin/ntt32_gpu; cp -r ../shared/bench/cheddar .gpu-bin/  (its source kit is not needed)
# then on the GPU machine, within the 10-minute limit of a call (about 9 minutes each):
#   STEPS="ntt kernels w32 w32-as-64" scripts/gpu_word32.sh
#   STEPS="n16 w32-timed cheddar40 cheddar64" scripts/gpu_word32.sh
#   STEPS="helr helr-w32 resnet-w32" scripts/gpu_word32.sh  (HELR, 10 iterations each; ResNet-20 on 3 images;
#   TRAIN_KERNELS=1: HELR's kernel profile of one iteration and one refresh)
#   STEPS="ncu-ntt ncu-sums" scripts/gpu_word32.sh  (Nsight Compute on the 32-bit NTTs and the baby-step sums)
#   STEPS="ks ks-w32 phantom" scripts/gpu_word32.sh  (key switching by word size beside PhantomFHE's; also carry
#   target/release/examples/hybrid_gpu_timing as $BIN/hybrid_gpu_timing, and .carry/phantom)
# Logs go to $OUT (or /tmp), one file a step.
set -uo pipefail
BIN=${BIN_DIR:-.gpu-bin}
LOG=${OUT:-/tmp}
source "$(dirname "$0")/cuda_env.sh"
# --input all reads Fashion-MNIST's test images: carried beside the binaries (.gpu-bin/fashion-mnist).
[ -d "$BIN/fashion-mnist" ] && export XEHE_FASHION_MNIST=${XEHE_FASHION_MNIST:-$PWD/$BIN/fashion-mnist}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null || echo "nvidia-smi not available"
status=0
# step NAME LINES COMMAND...: the command's log under $LOG, its last LINES lines (stage rows left
# out), the whole GPU's peak.
step() {
  local name=$1 lines=$2; shift 2
  # A step run again in one call (another BIN_DIR) keeps the first log: name-2, name-3, ...
  local base=$name i=2
  while [ -e "$LOG/$name.log" ]; do name=$base-$i; i=$((i + 1)); done
  ( while sleep 0.2; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits; done ) > "$LOG/$name.mem" 2>/dev/null &
  local sampler=$!
  local timed=(); [ -x /usr/bin/time ] && timed=(/usr/bin/time -f "host peak RSS %M KiB, wall %e s")
  ${timed[@]+"${timed[@]}"} timeout "${STEP_TIMEOUT:-300}" "$@" > "$LOG/$name.log" 2>&1 || status=1
  kill $sampler 2>/dev/null
  echo "== $name ($(date +%T))"
  grep -v -E "^\s*$|^(ModRaise|CoeffsToSlots|EvalMod|SlotsToCoeffs|stage) |^\| (input|---)" "$LOG/$name.log" | tail -"$lines"
  echo "whole-GPU peak MiB: $(sort -n "$LOG/$name.mem" | tail -1)"
}
boot=("$BIN/xehe" bench bootstrap --device cuda)
for s in ${STEPS:-ntt kernels w32 w32-as-64}; do
  case $s in
    ntt) step ntt 30 "$BIN/xehe" bench ntt --words --device cuda --log-n 16 --rows ${NTT_ROWS:-1,8,32} --reps 50 ;;
    kernels) step kernels 14 "$BIN/word32_kernels" --test-threads 1 ;;
    ntt32) step ntt32 8 "$BIN/ntt32_gpu" --test-threads 1 ;;
    seal-w32)
      # SEAL's evaluator corpus on the 30-bit-prime set, on 64- and 32-bit data words (python SEAL is
      # not on the GPU machines: the corpus made here is carried, XEHE_SEAL_CORPUS).
      XEHE_SEAL_CORPUS=${XEHE_SEAL_CORPUS:-$PWD/$BIN/seal-corpus} XEHE_DEVICE=cuda step seal-w32 8 \
        "$BIN/seal_evaluator" --exact every_evaluator_op_on_a_device_is_byte_identical_to_seal --nocapture ;;
    w32) step w32 28 "${boot[@]}" --preset n16-dense-w32 --reps 5 --compare-cpu --input all ;;
    w32-timed) step w32-timed 14 "${boot[@]}" --preset n16-dense-w32 --reps 10 ;;
    w32-as-64) step w32-as-64 14 "${boot[@]}" --preset n16-dense-w32 --reps 10 --data-words 64 ;;
    w32-kernels) step w32-kernels 60 "${boot[@]}" --preset n16-dense-w32 --reps 3 --kernels ;;
    ncu-ntt | ncu-sums)
      # Nsight Compute (Firecracker machines: --clock-control none) on the 32-bit NTTs of `bench ntt`, or on
      # the bootstrap's first baby-step sums: registers, occupancy, throughput and warp stalls.
      sections=(--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats)
      if [ "$s" = ncu-ntt ]; then
        step ncu-ntt 40 ncu --clock-control none -k regex:ntt32 -c "${NCU_COUNT:-12}" "${sections[@]}" \
          "$BIN/xehe" bench ntt --words --device cuda --log-n 16 --rows "${NTT_ROWS:-32}" --reps 2
      else
        step ncu-sums 60 ncu --clock-control none -k "regex:${NCU_KERNELS:-ks_inner_sums_u64}" -c "${NCU_SUMS_COUNT:-2}" "${sections[@]}" \
          "${boot[@]}" --preset n16-dense-w32 --reps 1
      fi ;;
    ks | ks-w32)
      # Key switching at N = 2^16 (examples/hybrid_gpu_timing, checked against the CPU first):
      # PhantomFHE's 1580-bit hybrid set, or the same modulus from 30-bit primes on 32-bit words.
      words=64; [ "$s" = ks-w32 ] && words=32
      step "$s" 40 "$BIN/hybrid_gpu_timing" --backend cuda --n 65536 --reps 50 --words $words ;;
    phantom)
      # PhantomFHE's ckks_sets at N = 2^16 (../shared/bench/phantom/README.md: its sources in .carry/phantom).
      ( cmake -S .carry/phantom -B /tmp/pb -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DPHANTOM_ENABLE_EXAMPLE=OFF \
          && cmake --build /tmp/pb -j 14 --target ckks_sets && /tmp/pb/bin/ckks_sets 65536 ) > "$LOG/phantom.log" 2>&1 || status=1
      echo "== phantom"; grep -E "^65536" "$LOG/phantom.log" | tail -12 ;;
    n16) step n16 28 "${boot[@]}" --n 65536 --reps 10 --input all ;;
    helr | helr-w32)
      preset=(--n 65536); [ "$s" = helr-w32 ] && preset=(--preset n16-dense-13-w32)
      step "$s" 12 "$BIN/xehe" demo train --data fashion-mnist --fashion-mnist "${XEHE_FASHION_MNIST:-$BIN/fashion-mnist}" "${preset[@]}" \
        --iterations "${TRAIN_ITERATIONS:-10}" --device cuda ${TRAIN_KERNELS:+--kernels} ;;
    resnet-w32)
      step resnet-w32 12 "$BIN/xehe" infer --model models/resnet20-relu.onnx --data fashion-mnist --fashion-mnist "${XEHE_FASHION_MNIST:-$BIN/fashion-mnist}" \
        --count "${IMAGES:-3}" --skip 6000 --preset n16-dense-w32 --device cuda --step-times ;;
    cheddar40 | cheddar64)
      ( cd "$BIN/cheddar" && CHEDDAR_BOOT_REPS=10 timeout 200 ./run.sh "${s#cheddar}" ) > "$LOG/$s.log" 2>&1 || status=1
      echo "== $s"; grep -E -i "ms|bits|error" "$LOG/$s.log" | tail -12 ;;
    *) echo "unknown step $s"; status=1 ;;
  esac
done
exit $status
