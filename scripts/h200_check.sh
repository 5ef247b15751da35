#!/usr/bin/env bash
# One call on the H200 for this round: every GPU test (the fault-injection test in its own
# process), the clocks/power check (default sweep included), cudnn:all matched by compare, and a
# sweep interrupted by SIGINT two cases in. Build here and carry build/src/sdpa-prof and
# build/tests/sdpa_gpu_tests. Results land in $OUT; short tables last.
set -uo pipefail
cd "$(dirname "$0")/.."
# Logs gather in a work folder and come back as one archive ($OUT/h200-check.tgz).
out=${WORK:-/tmp/h200-check}
mkdir -p "$out"
trap '[ -n "${OUT:-}" ] && tar -czf "$OUT/h200-check.tgz" -C "$out" .' EXIT
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
tool=build/src/sdpa-prof

echo "== GPU tests"
build/tests/sdpa_gpu_tests --gtest_filter=-FaultInjection.* >"$out/gpu_tests.log" 2>&1; tests_rc=$?
build/tests/sdpa_gpu_tests --gtest_filter=FaultInjection.* >"$out/fault.log" 2>&1; fault_rc=$?
grep -E "^\[  (PASSED|FAILED) |Failure" "$out/gpu_tests.log" "$out/fault.log" | head -20

echo "== interrupted sweep (SIGINT once two cases have finished)"
$tool --backend all --seq 1024,2048,4096 --json "$out/interrupted.json" >"$out/interrupted.txt" 2>"$out/interrupted.progress" &
pid=$!
until [ "$(grep -c '^\[' "$out/interrupted.progress" 2>/dev/null)" -ge 2 ] || ! kill -0 $pid 2>/dev/null; do sleep 0.2; done
kill -INT $pid; wait $pid; int_rc=$?
python3 -c "import json;d=json.load(open('$out/interrupted.json'));print('interrupted: rc=$int_rc partial',d['partial'],d['partial_reason'],len(d['cases']),'cases:',[c['backend'] for c in d['cases']])"

echo "== cudnn:all"
$tool --backend cudnn:all --seq 4096 --head-dim 128 --json "$out/cudnn_all.json" >"$out/cudnn_all.txt" 2>&1
$tool compare "$out/cudnn_all.json" "$out/cudnn_all.json" | tail -3

OUT=$out/clocks BUILD=build scripts/clocks_check.sh 2>&1 | tail -40
if [ -n "${SANITIZE:-}" ]; then
  echo "== compute-sanitizer"
  LOG_DIR=$out BUILD=build timeout "${SANITIZE_TIMEOUT:-300}" scripts/sanitize.sh
fi
echo "gpu tests rc=$tests_rc fault rc=$fault_rc"
