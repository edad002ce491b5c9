#!/usr/bin/env bash
# A SEAL program deeper than its chain on a GPU machine (tests/seal/deep_program.py): seal-python
# runs y <- (y^2 + u)/2 with SEAL's own Evaluator and keys at N = 2^16 (the N16-dense preset's
# primes), `xehe keygen bootstrap` makes the keys from SEAL's secret key once, and
# `xehe eval --expr 'bootstrap(x)' --device cuda` bootstraps whenever the levels run out; each
# bootstrap is also run with --device cpu and the two outputs must be byte-identical. SEAL decrypts
# and the script prints, per bootstrap, the level, the exact scale and the precision. LEVELS (default
# 36) is the program's depth: 36 at N = 2^16 is two bootstraps (13 user levels each).
#
# seal-python travels as a wheel in .whl/ (see the device README): build and strip xehe into
# .gpu-bin first, then: scripts/gpu_seal_bootstrap.sh [BIN_DIR] [N] [LEVELS]. Logs in $OUT (or /tmp).
set -uo pipefail
BIN=${1:-.gpu-bin}
N=${2:-65536}
LEVELS=${3:-36}
LOG=${OUT:-/tmp}
if ! python3 -c 'import seal' 2>/dev/null && ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
BITS=$(case $N in
  65536) echo 60,40,40,40,40,40,40,40,40,40,40,40,40,40,39,39,39,60,60,60,60,60,60,60,60,56,56,56,56,60 ;;
  *) echo 60,40,40,39,39,39,60,60,60,60,60,60,60,60,56,56,56,56,60 ;;
esac)
D=$(mktemp -d)
PYTHONUNBUFFERED=1 python3 tests/seal/deep_program.py cli "$D" "$N" "$BITS" "$LEVELS" --xehe "$BIN/xehe" \
  --device cuda --compare-cpu --check --depth-factor 0 2>&1 | tee "$LOG/seal_deep_program_n$N.log"
status=${PIPESTATUS[0]}
ls -l "$D"/bk.bin 2>/dev/null | awk '{printf "bootstrapping key file: %.2f GiB\n", $5 / 2^30}'
rm -rf "$D"
exit "$status"
