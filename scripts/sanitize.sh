#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over small cases of every built backend, on a GPU
# machine. Small odd sizes exercise the tile tails; each case runs verification plus one forward.
# BACKENDS=flash3:all runs every flash3 schedule (the default "all" runs its default one).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
sanitizer=${SANITIZER:-compute-sanitizer}
cases=(--backend "${BACKENDS:-all}" --batch 1 --heads 4 --kv-heads 2 --seq 17,127 --seq-kv 17,130
       --head-dim 64,128 --dtype bf16,fp16 --causal --warmup 0 --min-samples 1 --min-time 0)
status=0
for tool in memcheck racecheck synccheck; do
  echo "== $tool"
  "$sanitizer" --tool "$tool" --error-exitcode 99 "$build/src/sdpa-prof" "${cases[@]}" >/tmp/sanitize-$tool.log 2>&1
  rc=$?
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Error|hazard" /tmp/sanitize-$tool.log | sort | uniq -c | head -10
  echo "$tool exit code $rc"
  [ "$rc" -ne 0 ] && status=1
done
exit $status
