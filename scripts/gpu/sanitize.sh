#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck, initcheck and synccheck over small cases of every built backend, on a GPU
# machine. Small odd sizes exercise the tile tails; each case runs verification plus one forward.
# BACKENDS=flash3:all runs every flash3 schedule (the default "all" runs its default one). Sq 4 runs
# flash3's decode kernel; a second run per tool reads a paged cache (flash3 alone reads pages) with
# splits (Skv 1000) and a partly filled last page, a third pages of 64 at D64 on more CTAs than SMs
# (the TMA ring at 4 CTAs an SM), a fourth a long paged cache split into ~31 parts (B1 H32/8 Skv32768,
# pages of 16: the row-lookup plans' split counts).
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
sanitizer=${SANITIZER:-compute-sanitizer}
# racecheck and synccheck read cuDNN's runtime-compiled wgmma kernels wrongly (mbarrier/async-proxy
# ordering reported as races; under synccheck the kernel fails to launch): those two check our own.
own_backends=$("$build/src/sdpa-prof" list | awk 'NR > 1 && $1 != "cudnn" && $0 ~ / yes/ {print $1}' | paste -sd,)
shape=(--batch 1 --heads 4 --kv-heads 2 --seq 4,17,127 --seq-kv 17,130
       --head-dim 64,128 --dtype bf16,fp16 --causal --warmup 0 --min-samples 1 --min-time 0)
paged=(--batch 2 --heads 8 --kv-heads 2 --seq 1,16 --seq-kv 17,1000 --page-size 8,16,64
       --head-dim 64,128 --dtype bf16 --no-causal --warmup 0 --min-samples 1 --min-time 0)
paged_wide=(--batch 40 --heads 8 --kv-heads 8 --seq 1 --seq-kv 1000 --page-size 64 --head-dim 64
            --dtype bf16 --no-causal --warmup 0 --min-samples 1 --min-time 0)
paged_long=(--batch 1 --heads 32 --kv-heads 8 --seq 1 --seq-kv 32768 --page-size 16 --head-dim 64,128
            --dtype bf16 --no-causal --warmup 0 --min-samples 1 --min-time 0)
log_dir=${LOG_DIR:-/tmp}
status=0
for tool in ${SANITIZER_TOOLS:-memcheck racecheck initcheck synccheck}; do
  echo "== $tool"
  backends=${BACKENDS:-all}
  case $tool in racecheck | synccheck) backends=${BACKENDS:-$own_backends} ;; esac
  echo "backends: $backends"
  "$sanitizer" --tool "$tool" --error-exitcode 99 "$build/src/sdpa-prof" --backend "$backends" "${shape[@]}" >"$log_dir/sanitize-$tool.log" 2>&1
  rc=$?
  case ",$own_backends," in
    *,flash3,*)
      for cases in "paged[@]" "paged_wide[@]" "paged_long[@]"; do
        "$sanitizer" --tool "$tool" --error-exitcode 99 "$build/src/sdpa-prof" --backend flash3 \
          "${!cases}" >>"$log_dir/sanitize-$tool.log" 2>&1
        paged_rc=$?
        [ "$rc" -eq 0 ] && rc=$paged_rc
      done ;;
  esac
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Error|hazard|Uninitialized|Barrier" "$log_dir/sanitize-$tool.log" | sort | uniq -c | head -10
  echo "$tool exit code $rc"
  [ "$rc" -ne 0 ] && status=1
done
exit $status
