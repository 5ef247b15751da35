#!/usr/bin/env bash
# A against B on the H200, alternating: ROUNDS rounds of one process of build A (BASE, default
# build/base/sdpa-prof) then one of build B (TOOL, default build/src/sdpa-prof) over a preset
# (CONFIG, default configs/hopper-bench.json; configs/decode.json for decode) and its backends
# (BACKENDS, default flash3:all,cudnn), each writing its JSON to $OUT; then
# scripts/ab_table.py over them. Alternating puts both builds under the same drift of clock and
# power between processes, which one run of each does not.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/sdpa-prof-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
base=${BASE:-build/base/sdpa-prof}
tool=${TOOL:-build/src/sdpa-prof}
rounds=${ROUNDS:-3}
a=()
b=()
for round in $(seq 1 "$rounds"); do
  for side in a b; do
    bin=$base
    [ "$side" = b ] && bin=$tool
    json="$out/ab-$side$round.json"
    timeout "${RUN_TIMEOUT:-150}" "$bin" --config "${CONFIG:-configs/hopper-bench.json}" \
      --backend "${BACKENDS:-flash3:all,cudnn}" --min-time "${MIN_TIME:-0.5}" --quiet \
      --json "$json" >"$out/ab-$side$round.txt" 2>&1
    echo "round $round $side ($bin): rc=$?"
    if [ "$side" = a ]; then a+=("$json"); else b+=("$json"); fi
  done
done
python3 scripts/ab_table.py --a "${a[@]}" --b "${b[@]}" | tee "$out/ab.txt"
