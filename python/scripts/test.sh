#!/usr/bin/env bash
# The Python test command (README "Python"; .ci/run runs it after `cargo test --release`):
# build the wheel in a fresh virtual environment — `pip install ./python[test]`, which builds
# with maturin and installs numpy, pytest and seal-python 4.4 (the reference) — then run the
# pytest suite against it; then once more with the objects on an OpenCL device when there is
# one (pocl in CI).
#
#   bash python/scripts/test.sh [pytest arguments]
#
# The wheel's Rust build goes to target/python/ (CARGO_TARGET_DIR): its own folder, because the
# extension builds the dependencies with other features and flags, and the two builds must not
# overwrite each other's artifacts in one folder (the main crate's tests then fail to link);
# kept between runs, so a second run only relinks. XEHE_PY_VENV names the virtual environment
# (default: a new temporary one, removed afterwards).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PIP_DISABLE_PIP_VERSION_CHECK=1
export CARGO_TARGET_DIR=${XEHE_PY_TARGET_DIR:-$PWD/target/python}

if [ -n "${XEHE_PY_VENV:-}" ]; then
  venv=$XEHE_PY_VENV
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  venv=$tmp/venv
fi
rm -rf "$venv"
python3 -m venv "$venv"
start=$(date +%s)
"$venv/bin/python" -m pip install -q "./python[test]"
echo "wheel built and installed in a fresh venv in $(( $(date +%s) - start )) s"
"$venv/bin/python" -c 'import xehe, seal, numpy; print("xehe", xehe.__version__, "| seal-python", seal.__version__, "| numpy", numpy.__version__)'
# From the repository root, so that the installed package is imported, not python/xehe/.
"$venv/bin/python" -m pytest python/tests -q -p no:cacheprovider "$@"
# Again with every xehe object of the suite marked .gpu() on an OpenCL device (CI: pocl, on the
# CPU), so that the device path of the bindings is checked against SEAL's bytes too.
if "$venv/bin/python" -c 'import xehe; xehe.device.new_queue("opencl")' >/dev/null 2>&1; then
  echo "---- the suite again on the OpenCL device (XEHE_DEVICE=opencl) ----"
  XEHE_DEVICE=opencl "$venv/bin/python" -m pytest python/tests -q -p no:cacheprovider "$@"
else
  echo "SKIP the OpenCL pass of the Python suite: no OpenCL device here"
fi
