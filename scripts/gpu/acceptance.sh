#!/usr/bin/env bash
# The issues' "done when" runs on the GPU machine, in one call (part `acceptance` of h200_check.sh,
# whose part `tests` runs the GPU tests): ceilings, the default sweep twice (run-to-run
# stability), cold against hot L2 at S=512, the profile of the unfused backends, the fused
# backends at D=128, then the comparisons; short tables last.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
out=${OUT:-/tmp/sdpa-prof-acceptance}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
tool="$build/src/sdpa-prof"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader

"$tool" ceilings >"$out/ceilings.txt" 2>&1
"$tool" --json "$out/default-1.json" >"$out/default-1.txt" 2>"$out/default-1.log"; echo "default sweep 1 rc=$?"
"$tool" --json "$out/default-2.json" >"$out/default-2.txt" 2>"$out/default-2.log"; echo "default sweep 2 rc=$?"
"$tool" --backend naive-inplace,flash --seq 512 --no-profile --json "$out/s512-cold.json" >"$out/s512-cold.txt" 2>/dev/null
"$tool" --backend naive-inplace,flash --seq 512 --no-profile --hot --json "$out/s512-hot.json" >"$out/s512-hot.txt" 2>/dev/null
"$tool" --backend naive,naive-inplace,math --seq 1024 --kernels --json "$out/unfused-profile.json" >"$out/unfused-profile.txt" 2>/dev/null
"$tool" --backend flash,efficient,cudnn --seq 4096 --head-dim 128 --kernels --json "$out/fused-d128.json" >"$out/fused-d128.txt" 2>/dev/null

echo "== ceilings"; cat "$out/ceilings.txt"
echo "== run 1 vs run 2 (default preset)"; "$tool" compare "$out/default-1.json" "$out/default-2.json" --threshold 1 | cut -c1-150
echo "== S=512 cold vs hot"; "$tool" compare "$out/s512-cold.json" "$out/s512-hot.json" --threshold 1 | cut -c1-150
echo "== default sweep (run 1)"; cut -c1-190 "$out/default-1.txt"
echo "== fused D128"; cut -c1-190 "$out/fused-d128.txt" | head -8
