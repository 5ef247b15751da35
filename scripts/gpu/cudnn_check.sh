#!/usr/bin/env bash
# One call on the GPU machine for the cudnn backend (part `cudnn` of h200_check.sh, whose part
# `tests` runs the GPU tests): a cudnn/flash sweep, PyTorch's cuDNN path at D=64 and D=128, every
# engine config cuDNN proposes for one shape, and our cudnn backend run again on PyTorch's cuDNN
# 9.19 (same library version as PyTorch, not the system's). Build here first and carry the build folder.
#   BUILD         build folder (default build-cudnn)
#   ENGINES_ARGS  arguments for sdpa-prof --backend cudnn:all ("skip" to leave it out)
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build-cudnn}
out=${OUT:-/tmp/cudnn-check}
mkdir -p "$out"
tool_libs=/usr/local/cuda/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
torch_cudnn=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))' 2>/dev/null)
# cuDNN's own account of graphs and plans it refuses.
export CUDNN_LOGERR_DBG=1 CUDNN_LOGDEST_DBG=$out/cudnn_errors.log

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
echo "== sdpa-prof --backend cudnn,flash --seq 1024,4096 --head-dim 64,128"
LD_LIBRARY_PATH=$tool_libs "$build/src/sdpa-prof" --backend cudnn,flash --seq 1024,4096 --head-dim 64,128 \
  --json "$out/sdpa-prof.json" >"$out/table.txt" 2>"$out/progress.txt"
rc=$?
cat "$out/table.txt"
echo "== PyTorch's cuDNN path (D=64, D=128)"
for d in 64 128; do
  PYTHONUNBUFFERED=1 python3 share/sdpa-prof/torch_baseline.py --seq 4096 --head-dim $d --paths cudnn 2>&1 | grep -v -i warn
done

if [ "${ENGINES_ARGS:-}" != "skip" ]; then
  echo "== sdpa-prof --backend cudnn:all ${ENGINES_ARGS:---seq 4096}"
  # shellcheck disable=SC2086
  LD_LIBRARY_PATH=$tool_libs "$build/src/sdpa-prof" --backend cudnn:all ${ENGINES_ARGS:---seq 4096} 2>&1 | tee "$out/engines.txt"
fi

if [ -n "$torch_cudnn" ] && [ -d "$torch_cudnn" ]; then
  echo "== cudnn backend on PyTorch's cuDNN ($torch_cudnn)"
  LD_LIBRARY_PATH=$torch_cudnn:$tool_libs "$build/src/sdpa-prof" --backend cudnn --seq 4096 --head-dim 64,128 \
    >"$out/table-torch-cudnn.txt" 2>"$out/progress-torch-cudnn.txt"
  cat "$out/table-torch-cudnn.txt"
fi

echo "== cudnn plans (system cuDNN, then PyTorch's)"
grep -h "^cudnn " "$out/progress.txt" "$out/progress-torch-cudnn.txt" 2>/dev/null
echo "== cuDNN error log: $(grep -c . "$out/cudnn_errors.log" 2>/dev/null) lines"
head -c 2500 "$out/cudnn_errors.log" 2>/dev/null
exit $rc
