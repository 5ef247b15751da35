#!/usr/bin/env bash
# One call on the H200 for the flash3 kernel: a quick check of every schedule (a wrong or
# hanging kernel fails here in seconds), the fused GPU tests, the hopper-bench preset with every
# schedule beside the preset's own cases, compute-sanitizer on small odd shapes (SANITIZE=1),
# the long shape of issue 14 (LONG=0 leaves it out), the SASS of the kernels (SASS=1), and Nsight
# Compute's view of flash3 and cuDNN at one shape (PROFILE=1); BENCH=0 leaves out the bench.
# The sanitizer's batch of 34 makes more tiles than the H200 has SMs, so persistent CTAs reuse
# the ring and Q across tiles.
# Build here and carry build/src/sdpa-prof and build/tests/sdpa_gpu_tests. Results land in
# $OUT; short tables last.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/sdpa-prof-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
export PATH=/usr/local/cuda/bin:$PATH
tool=${TOOL:-build/src/sdpa-prof}
cols=backend,shape,causal,time,tflops,peak,kernel,occupancy,verified,status,reason
quick=(--warmup 0 --min-samples 1 --min-time 0 --no-profile --quiet)
bench=(--min-time "${MIN_TIME:-0.5}" --columns "$cols" --quiet)
summary="$out/summary.txt"
exec > >(tee -a "$summary") 2>&1

if [ "${SASS:-0}" = 1 ]; then
  echo "== SASS of the flash3 kernels (per kernel: HGMMA, LDL/STL local-memory instructions)"
  cuobjdump --dump-sass "$tool" 2>&1 | awk '/Function : .*flash3/{if (n) print h, l, n; n=$3; h=0; l=0; f=1; next}
    /Function :/{if (f) print h, l, n; f=0; n=""} f && /HGMMA/{h++} f && /(LDL|STL)/{l++}
    END{if (f) print h, l, n}' | sed 's/_ZN4sdpa6flash317flash3_fwd_kernelINS0_15Flash3FwdTraits//' | cut -c1-90
fi

echo "== quick check, every schedule"
timeout 60 $tool --backend flash3:all --batch 1 --heads 4 --kv-heads 2 --seq 1000,17 --seq-kv 333 \
  --head-dim 64,128 "${quick[@]}" --case-timeout 20 --columns backend,shape,causal,verified,status 2>&1 |
  grep -E "^flash3" | awk '{print $NF}' | sort | uniq -c

echo "== quick check, every schedule, more tiles than SMs (CTAs reuse the ring across tiles)"
timeout 90 $tool --backend flash3:all --batch 34 --heads 4 --kv-heads 2 --seq 1000,4097 \
  --head-dim 64,128 --dtype bf16 "${quick[@]}" --case-timeout 20 --columns backend,shape,causal,verified,status 2>&1 |
  grep -E "^flash3" | awk '{print $NF}' | sort | uniq -c

echo "== quick check, every schedule, not causal: persistent grids split the last round's tiles"
timeout 90 $tool --backend flash3:all --batch 3 --heads 4 --kv-heads 2 --seq 300,1000 --seq-kv 4097 \
  --no-causal --head-dim 64,128 "${quick[@]}" --case-timeout 20 --columns backend,shape,causal,verified,status 2>&1 |
  grep -E "^flash3" | awk '{print $NF}' | sort | uniq -c

echo "== fused GPU tests"
timeout 120 build/tests/sdpa_gpu_tests --gtest_filter='FusedBackends.*' >"$out/gpu_tests.log" 2>&1
echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |Failure|Expected|Which is" "$out/gpu_tests.log" | head -20

if [ "${BENCH:-1}" = 1 ]; then
  echo "== hopper-bench (B8 H16 S4096 bf16)"
  timeout 200 $tool --config configs/hopper-bench.json --backend flash,flash3,flash3:all,cudnn \
    --json "$out/hopper.json" "${bench[@]}" >"$out/hopper.txt" 2>&1
fi

if [ "${SANITIZE:-0}" = 1 ]; then
  # Causal odd sizes, then non-causal ones whose persistent grids split tiles along the keys.
  shapes=("causal:--batch ${SANITIZE_BATCH:-34} --seq 17,130 --seq-kv 130"
          "split:--batch 3 --seq 300 --seq-kv 4097 --no-causal")
  for shape in "${shapes[@]}"; do
    for tool_name in memcheck racecheck synccheck; do
      log="$out/sanitize-${shape%%:*}-$tool_name.log"
      timeout "${SANITIZE_TIMEOUT:-60}" compute-sanitizer --tool "$tool_name" --error-exitcode 99 $tool \
        --backend "${SANITIZE_BACKENDS:-flash3:all}" --heads 4 --kv-heads 2 ${shape#*:} \
        --head-dim 64,128 --dtype bf16 "${quick[@]}" >"$log" 2>&1
      echo "${shape%%:*} $tool_name rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | head -2 | tr '\n' ' ')"
    done
  done
fi

if [ "${PROFILE:-0}" = 1 ]; then
  # Nsight Compute's pipe use, warp stalls, instruction mix and per-instruction (SASS) samples
  # of flash3 and cuDNN at one shape (PROFILE_ARGS), for what limits the kernel.
  ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  for pair in "flash3 flash3_fwd" "cudnn cudnn"; do
    set -- $pair
    timeout 180 "$ncu" --clock-control none --cache-control all -k "regex:$2" -c 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
      --section InstructionStats --section SchedulerStats --section SourceCounters --section Occupancy \
      -o "$out/prof_$1" $tool --backend "$1" ${PROFILE_ARGS:---batch 8 --heads 16 --seq 4096 --head-dim 64 --causal} \
      --dtype bf16 "${quick[@]}" --no-counters >"$out/prof_$1.log" 2>&1
    echo "ncu $1: rc=$?"
    "$ncu" -i "$out/prof_$1.ncu-rep" --page details --print-details all >"$out/details_$1.txt" 2>&1
    "$ncu" -i "$out/prof_$1.ncu-rep" --page source --csv --print-source sass >"$out/sass_$1.csv" 2>&1
    python3 scripts/gpu/sass_mix.py "$out/sass_$1.csv" --top 15 >"$out/mix_$1.txt" 2>&1
    grep -E "Pipe|Issue|Stall|Warp Cycles|Executed Ipc|Eligible|Active Warps|No Eligible" "$out/details_$1.txt" | head -30
  done
fi

if [ "${LONG:-1}" = 1 ]; then
  echo "== long (B4 H32 S16384 D128 causal)"
  timeout "${LONG_TIMEOUT:-300}" $tool --config configs/hopper-bench.json --backend "${LONG_BACKENDS:-flash,flash3,flash3:all,cudnn}" \
    --batch 4 --heads 32 --seq 16384 --head-dim 128 --causal --json "$out/long.json" "${bench[@]}" >"$out/long.txt" 2>&1
fi
grep -h -E "^(backend|flash|cudnn)" "$out"/hopper.txt "$out/long.txt" 2>/dev/null
