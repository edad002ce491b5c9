#!/usr/bin/env bash
# The Python module on a GPU: the pytest suite with every xehe object
# on the GPU (XEHE_DEVICE=cuda), then the per-call overhead of the Python layer over the Rust API.
#
# The GPU machines have no Rust toolchain and no network, so the wheels are made here and
# carried there:
#
#   1. here (Rust, PyPI):  bash python/scripts/gpu_check.sh prepare
#        builds the xehe wheel (abi3, stripped) and downloads seal-python 4.4 for the GPU
#        machine's Python (XEHE_GPU_PYTHON, default 3.12) into python/.gpu-wheels/ (git-ignored;
#        about 6 MB).
#   2. on the GPU machine, from the repository root, carrying python/.gpu-wheels:
#        bash python/scripts/gpu_check.sh [run]
#        installs the wheels into a scratch folder (numpy and pytest are expected there), prints
#        the devices, runs `XEHE_DEVICE=cuda pytest python/tests`, then
#        `python/scripts/bench_overhead.py` on the GPU (N = 8192, then N = 16384) and on the CPU
#        for reference. Logs and JSON go to $OUT (or /tmp/xehe-gpu-check).
#
# On a GPU machine that has cargo and PyPI, `run` builds the wheel itself when none was carried.
# XEHE_CHECK_DEVICE=cpu makes `run` a dry run on a machine without a GPU (suite and benchmark on
# the CPU); prepare with XEHE_GPU_PYTHON set to that machine's Python then.
set -uo pipefail
cd "$(dirname "$0")/../.."
WHEELS=python/.gpu-wheels
mode=${1:-run}

if [ "$mode" = prepare ]; then
  set -e
  py=${XEHE_GPU_PYTHON:-3.12}
  rm -rf "$WHEELS"
  mkdir -p "$WHEELS"
  python3 -m pip wheel -q --no-deps -w "$WHEELS" ./python
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$py" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$WHEELS" seal-python==4.4.0
  ls -la "$WHEELS"
  du -sh "$WHEELS"
  echo "now, on the GPU machine (carry $WHEELS): bash python/scripts/gpu_check.sh"
  exit 0
fi
[ "$mode" = run ] || { echo "usage: $0 [prepare|run]" >&2; exit 2; }

DEVICE=${XEHE_CHECK_DEVICE:-cuda}
[ "$DEVICE" = cpu ] && BENCH_DEVICE=cpu || BENCH_DEVICE=gpu
LOG=${OUT:-/tmp/xehe-gpu-check}
mkdir -p "$LOG"
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
site=$(mktemp -d)/site
if ! ls "$WHEELS"/xehe-*.whl >/dev/null 2>&1; then
  if command -v cargo >/dev/null; then
    echo "no carried wheel: building one here"
    mkdir -p "$WHEELS"
    "$PY" -m pip wheel -q --no-deps -w "$WHEELS" ./python || exit 1
  else
    echo "no xehe wheel in $WHEELS and no cargo here: run 'bash python/scripts/gpu_check.sh prepare' on a machine with Rust, then carry $WHEELS" >&2
    exit 1
  fi
fi
"$PY" -m pip install -q --no-index --no-deps --no-compile --target "$site" "$WHEELS"/*.whl || exit 1
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"

# CUDA libraries: the toolkit's, else pip's NVRTC wheel (as scripts/gpu_pass.sh).
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
for d in $("$PY" -c 'import nvidia, os; print(os.path.dirname(nvidia.__file__))' 2>/dev/null); do
  for l in "$d"/cuda_nvrtc/lib "$d"/cu13/lib; do [ -d "$l" ] && export LD_LIBRARY_PATH="$l:${LD_LIBRARY_PATH:-}"; done
done
export XEHE_KERNEL_CACHE=${XEHE_KERNEL_CACHE:-/tmp/xehe-kernels}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null || echo "nvidia-smi not available"
"$PY" -c 'import sys, xehe, seal, numpy; print("Python", sys.version.split()[0], "| xehe", xehe.__version__, "| seal-python", seal.__version__, "| numpy", numpy.__version__); print(xehe.device.info())' \
  2>&1 | tee "$LOG/devices.log"

status=0
echo "==== XEHE_DEVICE=$DEVICE pytest python/tests ===="
start=$(date +%s)
XEHE_DEVICE=$DEVICE "$PY" -m pytest python/tests -q -p no:cacheprovider -rs 2>&1 | tee "$LOG/pytest_cuda.log"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
echo "pytest (XEHE_DEVICE=$DEVICE) took $(( $(date +%s) - start )) s"

echo "==== per-call overhead, $BENCH_DEVICE ===="
for n in 8192 16384; do
  XEHE_DEVICE=$DEVICE "$PY" python/scripts/bench_overhead.py --device $BENCH_DEVICE --n "$n" --json-out "$LOG/bench_gpu_n$n.json" \
    2>&1 | tee "$LOG/bench_gpu_n$n.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
done
echo "==== per-call overhead, CPU (reference; one thread) ===="
XEHE_DEVICE=cpu "$PY" python/scripts/bench_overhead.py --device cpu --json-out "$LOG/bench_cpu.json" 2>&1 | tee "$LOG/bench_cpu.txt"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
exit $status
