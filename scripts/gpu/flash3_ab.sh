#!/usr/bin/env bash
# A against B on the H200, alternating: ROUNDS (default 3) rounds of build A (BASE, default
# build/base/sdpa-prof) and build B (TOOL, default build/src/sdpa-prof) over a preset (CONFIG,
# default configs/hopper-bench.json; configs/decode.json for decode) and its backends (BACKENDS,
# default flash3:all,cudnn), through scripts/gpu/variants_ab.sh (its JSON in $OUT/variants); then
# scripts/ab_table.py over them, which adds each case's time at the peak clock.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILDS="A=${BASE:-build/base/sdpa-prof} B=${TOOL:-build/src/sdpa-prof}" ROUNDS=${ROUNDS:-3} \
  scripts/gpu/variants_ab.sh --config "${CONFIG:-configs/hopper-bench.json}" \
  --backend "${BACKENDS:-flash3:all,cudnn}" --min-time "${MIN_TIME:-0.5}"
out=${OUT:-/tmp/sdpa-prof-out}/variants
python3 scripts/ab_table.py --a "$out"/A-*.json --b "$out"/B-*.json | tee "$out/ab.txt"
