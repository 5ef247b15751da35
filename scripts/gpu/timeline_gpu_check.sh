#!/usr/bin/env bash
# The timeline on a GPU in one call: the records' GPU test, then a run of every backend at the
# study's shape with --timeline and --json, checked by tests/timeline_check.py against that run's
# kernel count. Build here and carry build/src/sdpa-prof and build/tests/sdpa_gpu_tests; results
# (the timeline to open in Perfetto included) land in $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/sdpa-prof-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu

echo "== records test"
build/tests/sdpa_gpu_tests --gtest_filter='Profile.*' >"$out/profile_tests.log" 2>&1; tests_rc=$?
grep -E "^\[  (PASSED|FAILED) |Failure" "$out/profile_tests.log" | head -20

echo "== run --timeline"
build/src/sdpa-prof --backend all --seq 1024 --timeline "$out/run.trace.json" --json "$out/run.json" \
  >"$out/run.txt" 2>"$out/run.progress"; run_rc=$?
grep -E "^wrote|timeline" "$out/run.progress"
python3 tests/timeline_check.py "$out/run.trace.json" --report "$out/run.json" --complete; check_rc=$?
ls -l "$out/run.trace.json"
echo "records test rc=$tests_rc run rc=$run_rc check rc=$check_rc"
