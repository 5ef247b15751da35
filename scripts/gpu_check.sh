#!/usr/bin/env bash
# One call on the GPU machine: GPU tests, the benchmark, and PyTorch's figures on the same
# shapes, with the short tables last. Build here first (cmake --build build) and carry `build`.
#   SDPA_ARGS   arguments for the sdpa-prof benchmark run
#   TORCH_ARGS  arguments for scripts/torch_baseline.py ("skip" to leave it out)
#   GTEST_FILTER  which GPU tests to run (default: all)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
out=${OUT:-/tmp/sdpa-prof-out}
mkdir -p "$out"
# Our binaries need the system CUDA and cuDNN libraries; PyTorch must keep its own cuDNN.
tool_libs=/usr/local/cuda/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
with_libs() { LD_LIBRARY_PATH=$tool_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$@"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader

echo "== GPU tests"
# As ctest runs them: the fault-injection tests poison their context, so they get a process of
# their own.
with_libs "$build/tests/sdpa_gpu_tests" --gtest_filter="${GTEST_FILTER:--FaultInjection.*}" 2>&1 |
  tee "$out/gpu_tests.log" | grep -E "^\[  (FAILED|PASSED) |Failure|rel L2|^GPU" | head -40
tests_rc=${PIPESTATUS[0]}
if [ -z "${GTEST_FILTER:-}" ]; then
  with_libs "$build/tests/sdpa_gpu_tests" --gtest_filter='FaultInjection.*' >"$out/gpu_fault_tests.log" 2>&1 ||
    tests_rc=1
  grep -E "^\[  (FAILED|PASSED) " "$out/gpu_fault_tests.log"
fi

echo "== sdpa-prof ${SDPA_ARGS:-}"
# shellcheck disable=SC2086
with_libs "$build/src/sdpa-prof" ${SDPA_ARGS:---backend all --seq 1024,4096} --json "$out/sdpa-prof.json" \
  >"$out/table.txt" 2>"$out/progress.txt"
prof_rc=$?
tail -3 "$out/progress.txt"

if [ "${TORCH_ARGS:-}" != "skip" ]; then
  # shellcheck disable=SC2086
  PYTHONUNBUFFERED=1 python3 scripts/torch_baseline.py ${TORCH_ARGS:-} >"$out/torch.txt" 2>&1
fi

echo "== results (gpu tests rc=$tests_rc, sdpa-prof rc=$prof_rc)"
cat "$out/table.txt"
[ -f "$out/torch.txt" ] && cat "$out/torch.txt"
exit $((tests_rc != 0 || prof_rc != 0))
