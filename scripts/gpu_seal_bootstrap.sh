#!/usr/bin/env bash
# SEAL around xehe's bootstrapping on a GPU machine, N = 2^16 (issue 15, acceptance 2):
# seal-python makes the secret key and a ciphertext at the last level, `xehe keygen bootstrap`
# makes the bootstrapping keys from SEAL's key, `xehe eval --expr 'bootstrap(x)' --device cuda`
# bootstraps, SEAL decrypts and prints the precision. seal-python travels as a wheel in .whl/
# (see the device README): scripts/gpu_seal_bootstrap.sh [BIN_DIR] [N]. Logs in $OUT (or /tmp).
set -uo pipefail
BIN=${1:-.gpu-bin}
N=${2:-65536}
LOG=${OUT:-/tmp}
if ! python3 -c 'import seal' 2>/dev/null && ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
BITS=$(case $N in
  65536) echo 60,40,40,40,40,40,40,40,40,40,40,40,40,40,39,39,39,60,60,60,60,60,60,60,60,56,56,56,56,60 ;;
  *) echo 60,40,40,39,39,39,60,60,60,60,60,60,60,60,56,56,56,56,60 ;;
esac)
D=$(mktemp -d)
t0=$(date +%s)
python3 tests/seal/bootstrap_roundtrip.py make "$D" "$N" "$BITS" || exit 1
t1=$(date +%s)
"$BIN/xehe" keygen bootstrap --params "$D/parms.bin" --secret-key "$D/secret_key.bin" --out "$D/bk.bin" || exit 1
t2=$(date +%s)
"$BIN/xehe" eval --params "$D/parms.bin" --bootstrap-keys "$D/bk.bin" --input "x=$D/x.bin" \
  --expr 'bootstrap(x)' --out "$D/y.bin" --device cuda || exit 1
t3=$(date +%s)
python3 tests/seal/bootstrap_roundtrip.py check "$D" "$D/y.bin" | tee "$LOG/seal_bootstrap_n$N.json" || exit 1
echo "SEAL make $((t1 - t0)) s, xehe keygen $((t2 - t1)) s, xehe eval (load keys, bootstrap, save) $((t3 - t2)) s"
rm -rf "$D"
