#!/usr/bin/env bash
# GPU tests, the fused benchmark against PyTorch (configs/fused-bench.json + scripts/bench_fused.py),
# every cuDNN engine config at one shape, and the cudnn backend's chosen engine; tables last.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
out=${OUT:-/tmp/sdpa-prof-final}
mkdir -p "$out"
libs=/usr/local/cuda/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
tool() { LD_LIBRARY_PATH=$libs "$build/src/sdpa-prof" "$@"; }

LD_LIBRARY_PATH=$libs "$build/tests/sdpa_gpu_tests" >"$out/gpu_tests.log" 2>&1
echo "gpu tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$out/gpu_tests.log" | tr '\n' ' ')"
tool --config configs/fused-bench.json --no-profile --json "$out/fused-bench.json" >"$out/fused-bench.txt" 2>"$out/fused-bench.log"
echo "fused bench rc=$?"
tool --backend cudnn --seq 4096 --head-dim 64,128 --kernels --json "$out/cudnn.json" --csv "$out/cudnn.csv" \
  --md "$out/cudnn.md" >"$out/cudnn.txt" 2>&1
echo "cudnn run rc=$?"
tool --backend cudnn:all --seq 4096 --head-dim 64 >"$out/engines.txt" 2>&1
echo "engines rc=$?"
PYTHONUNBUFFERED=1 python3 scripts/bench_fused.py "$out/fused-bench.json" >"$out/bench-vs-torch.txt" 2>&1

echo "== cudnn chosen config"; grep -o "chose .*" "$out/cudnn.txt"; head -4 "$out/cudnn.csv" | cut -c1-160
echo "== every cuDNN engine config, S4096 D64"; cut -c1-200 "$out/engines.txt"
echo "== ours vs PyTorch (fused)"; grep -v -i warn "$out/bench-vs-torch.txt"
