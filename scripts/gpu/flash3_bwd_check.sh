#!/usr/bin/env bash
# One call on the H200 for the flash3 backward: a quick check of the backward after every
# schedule's forward at odd shapes (a wrong or hanging kernel fails here in seconds, each case
# under --case-timeout), the GPU tests that verify its gradients, compute-sanitizer on small odd
# shapes (SANITIZE=1), and the hopper-bwd preset (BENCH=0 leaves it out), short tables last.
# Build here and carry build/src/sdpa-prof and build/tests/sdpa_gpu_tests. Results land in $OUT.
# FLASH3=flash3:all runs every flash3 schedule where the default runs (the quick check, the
# sanitizer, the preset): each schedule's forward statistics feeding the backward.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/sdpa-prof-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
export PATH=/usr/local/cuda/bin:$PATH
tool=${TOOL:-build/src/sdpa-prof}
cols=backend,shape,causal,time,tflops,peak,kernel,occupancy,verified,status,reason
quick=(--warmup 0 --min-samples 1 --min-time 0 --no-profile --quiet --case-timeout 30)
bench=(--min-time "${MIN_TIME:-0.5}" --columns "$cols" --quiet)
summary="$out/summary.txt"
flash3=${FLASH3:-flash3}
preset_backends=()
[ "$flash3" != flash3 ] && preset_backends=(--backend "flash,$flash3,cudnn")
exec > >(tee -a "$summary") 2>&1

for mask in --causal --no-causal; do
  echo "== quick check: flash3 backward $mask, GQA 4/2, Sq != Skv both ways, D64 and D128"
  timeout 120 $tool --backend "$flash3" --pass bwd,fwd+bwd --batch 2 --heads 4 --kv-heads 2 \
    --seq 1,17,1000 --seq-kv 333 --head-dim 64,128 --dtype bf16,fp16 "$mask" "${quick[@]}" \
    --columns backend,shape,causal,verified,status 2>&1 | grep -E "^flash3" | awk '{print $NF}' | sort | uniq -c
done

echo "== quick check: the backward after every schedule's forward (split tiles' LSE)"
timeout 120 $tool --backend flash3:all --pass bwd --batch 3 --heads 4 --kv-heads 2 --seq 300 \
  --seq-kv 4097 --no-causal --head-dim 64,128 "${quick[@]}" --columns backend,shape,causal,verified,status 2>&1 |
  grep -E "^flash3" | awk '{print $NF}' | sort | uniq -c

echo "== GPU tests"
timeout 600 build/tests/sdpa_gpu_tests \
  --gtest_filter='Backends.GradientsMatchReferenceOnOddSizes:Variants.EveryFlash3Schedule*' \
  >"$out/gpu_tests_bwd.log" 2>&1
echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |Failure|Expected|Which is" "$out/gpu_tests_bwd.log" | head -20

if [ "${SANITIZE:-0}" = 1 ]; then
  shapes=("causal:--batch 2 --seq 130 --seq-kv 257 --causal --head-dim 64"
          "full:--batch 2 --seq 257 --seq-kv 130 --no-causal --head-dim 128 --dtype fp16")
  for shape in "${shapes[@]}"; do
    for tool_name in memcheck racecheck synccheck; do
      log="$out/sanitize-bwd-${shape%%:*}-$tool_name.log"
      timeout "${SANITIZE_TIMEOUT:-120}" compute-sanitizer --tool "$tool_name" --error-exitcode 99 $tool \
        --backend "$flash3" --pass bwd --heads 4 --kv-heads 2 ${shape#*:} "${quick[@]}" >"$log" 2>&1
      echo "${shape%%:*} $tool_name rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | head -2 | tr '\n' ' ')"
    done
  done
fi

if [ "${BENCH:-1}" = 1 ]; then
  echo "== hopper-bwd (B8 H16 S4096 bf16, --pass bwd)"
  timeout "${BENCH_TIMEOUT:-400}" $tool --config configs/hopper-bwd.json "${preset_backends[@]}" \
    --json "$out/hopper-bwd.json" "${bench[@]}" \
    >"$out/hopper-bwd.txt" 2>&1
  grep -h -E "^(backend|flash|cudnn)" "$out/hopper-bwd.txt"
fi
