#!/usr/bin/env bash
# Builds side by side on a GPU, alternating: ROUNDS rounds (default 2), each running every build
# of BUILDS ("NAME=PATH ...", PATH an sdpa-prof binary) once with the sdpa-prof arguments given,
# each writing $OUT/variants/NAME-ROUND.json (OUT default /tmp/sdpa-prof-out); then
# scripts/variants_table.py over them, with AGAINST (a backend the runs include, e.g. cudnn) where
# set. Alternating puts every build under the same drift of clock and power between processes.
#   BUILDS="main=build-int/src/sdpa-prof-main tiles=build-int/src/sdpa-prof-tiles" AGAINST=cudnn \
#     scripts/gpu/variants_ab.sh --config configs/decode.json --backend flash3,cudnn --no-profile
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${BUILDS:-}" ] || [ $# -eq 0 ]; then
  echo "usage: BUILDS=\"NAME=PATH ...\" [ROUNDS=N] [AGAINST=BACKEND] $0 SDPA-PROF-ARGUMENTS..." >&2
  exit 2
fi
out=${OUT:-/tmp/sdpa-prof-out}/variants
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
for round in $(seq 1 "${ROUNDS:-2}"); do
  for build in $BUILDS; do
    name=${build%%=*}
    timeout "${RUN_TIMEOUT:-300}" "${build#*=}" "$@" --quiet --json "$out/$name-$round.json" \
      >"$out/$name-$round.txt" 2>&1
    echo "round $round $name (${build#*=}): rc=$?"
  done
done
table=()
for build in $BUILDS; do
  name=${build%%=*}
  table+=(--variant "$name" "$out/$name"-*.json)
done
python3 scripts/variants_table.py "${table[@]}" ${AGAINST:+--against "$AGAINST"} | tee "$out/table.txt"
