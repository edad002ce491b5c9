#!/usr/bin/env bash
# Run the fuzz targets (fuzz/README.md): build them with cargo-fuzz (libFuzzer, no sanitizer:
# stable Rust), then fuzz each for SECONDS, starting from its committed seed corpus. New
# inputs go to a scratch directory (the committed corpus is left as make_corpus.py wrote it);
# a failing input is saved under fuzz/artifacts/<target>/ and the script exits non-zero.
#
# Usage: fuzz/run.sh SECONDS [TARGET...]     (default: every target in fuzz/fuzz_targets/)
# Environment: FUZZ_RUNS=N stops each target after N executions (SECONDS still caps it);
# FUZZ_KEEP=DIR keeps each target's grown corpus in DIR/<target>. The inputs that once failed
# (fuzz/regressions/<target>/) are run first, with the fuzz build's overflow checks.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for f in fuzz/fuzz_targets/*.rs; do targets+=("$(basename "$f" .rs)"); done
fi

cargo fuzz build --sanitizer none
failed=()
for t in "${targets[@]}"; do
  scratch=${FUZZ_KEEP:+$FUZZ_KEEP/$t}
  scratch=${scratch:-$(mktemp -d)}
  mkdir -p "$scratch"
  log=$(mktemp)
  start=$(date +%s)
  # -rss_limit_mb: a backstop; single allocations are bounded by the targets' own allocator.
  dirs=("$scratch" "fuzz/corpus/$t")
  [ -d "fuzz/regressions/$t" ] && dirs+=("fuzz/regressions/$t")
  if cargo fuzz run --sanitizer none "$t" "${dirs[@]}" -- \
      -max_total_time="$secs" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} -rss_limit_mb=4096 -timeout=60 \
      -max_len=16384 -print_final_stats=1 >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s+=$2} END {print s+0}')
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -n1)
    printf '%-22s %9s executions in %4d s  %s\n' "$t" "$runs" "$(( $(date +%s) - start ))" "$cov"
  else
    failed+=("$t")
    echo "---- $t FAILED; its log:"
    tail -n 60 "$log"
  fi
  rm -f "$log"
  [ -n "${FUZZ_KEEP:-}" ] || rm -rf "$scratch"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz targets failed: ${failed[*]} (inputs under fuzz/artifacts/)"
  exit 1
fi
