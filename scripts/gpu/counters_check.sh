#!/usr/bin/env bash
# One call on the H200 for issue 13: the counter pass against Nsight Compute on the same binary
# and the same metric names, naive-inplace's DRAM bytes against its own count, and the timing
# medians with and without the counter pass. Build here and carry the sdpa-prof binary (TOOL);
# results land in $OUT, the side-by-side table last.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/sdpa-prof-out}
tool=${TOOL:-build/src/sdpa-prof}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
ncu=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
shape="--batch 8 --heads 16 --dtype bf16 --causal"
brief="--timeout 4"  # seconds of sampling per case at most: the whole check fits one short call

# Both shapes, as tag 1 and tag 2 (c: counters, with --kernels tables; a: counters, no tables;
# n: --no-counters). The runs
# without counters come before and after those with: the drift between the two is the noise of
# processes run minutes apart.
both_shapes() {  # tag suffix flags...
  local tag=$1 suffix=$2 text1=/dev/null text2=/dev/null
  shift 2
  [ "$tag" = c ] && text1="$out/c1.txt" text2="$out/c2.txt"
  $tool --backend naive-inplace,math,efficient,flash,cudnn $shape $brief --seq 1024 --head-dim 64 "$@" \
    --json "$out/${tag}1$suffix.json" >"$text1" 2>"$out/${tag}1$suffix.progress"; echo "rc=$?"
  $tool --backend flash,cudnn $shape $brief --seq 4096 --head-dim 128 "$@" \
    --json "$out/${tag}2$suffix.json" >"$text2" 2>"$out/${tag}2$suffix.progress"; echo "rc=$?"
}
if [ "${ALTERNATE:-0}" -gt 0 ]; then
  # Only the timing criterion: ALTERNATE rounds of a run without and a run with the counter
  # pass, then one more without, so each "with" run sits between two "without" runs.
  for round in $(seq 1 "$ALTERNATE"); do
    echo "== round $round: without, with counters"
    both_shapes n "-r$round" --no-counters
    both_shapes a "-r$round"
  done
  both_shapes n "-r$((ALTERNATE + 1))" --no-counters
  python3 "$here/counters_compare.py" --alternating "$out" >"$out/alternating.md"
  (cd "$out" && rm -f ./*.progress)
  cat "$out/alternating.md"
  exit 0
fi
echo "== without counters (timing medians)"
both_shapes n "" --no-counters
echo "== counter pass, S1024 D64 and S4096 D128"
both_shapes c "" --kernels
grep -E "^counters|^profile" "$out/c1.progress"
echo "== without counters again"
both_shapes n -after --no-counters

echo "== Nsight Compute, one launch of each fused kernel, same metrics"
metrics=$(python3 "$here/counters_compare.py" --metrics "$out/c1.json")
echo "metrics: $metrics"
quick="--no-counters --no-profile --min-samples 1 --min-time 0 --warmup 1"
run_ncu() {  # backend seq head_dim kernel-regex [replay mode]
  local replay=${5:-kernel} name=ncu_$1_$2
  [ "$replay" = kernel ] || name=ncu-app_$1_$2
  timeout 120 "$ncu" --clock-control none --cache-control all --replay-mode "$replay" -k "regex:$4" -c 1 \
    --metrics "$metrics" --csv --print-units base \
    $tool --backend "$1" $shape --seq "$2" --head-dim "$3" $quick >"$out/$name.csv" 2>"$out/$name.log"
  echo "ncu $1 S$2 ($replay replay): rc=$?"
}
run_ncu efficient 1024 64 efficient_fwd
run_ncu flash 1024 64 flash_fwd
run_ncu cudnn 1024 64 cudnn
run_ncu flash 4096 128 flash_fwd
run_ncu cudnn 4096 128 cudnn
if [ "${APP_REPLAY:-1}" = 1 ]; then
  run_ncu efficient 1024 64 efficient_fwd application
  run_ncu flash 1024 64 flash_fwd application
  run_ncu cudnn 1024 64 cudnn application
fi
grep -h -A8 "^  counters:" "$out/c1.txt" "$out/c2.txt" | cut -c1-160 | head -70
grep -h -E "dram-bound|tensor-idle|achieved-occupancy|DRAM-bound|tensor pipes|achieved occupancy far" "$out/c1.txt" "$out/c2.txt" | head -12
python3 "$here/counters_compare.py" --out "$out" >"$out/side_by_side.md"
(cd "$out" && tar czf logs.tar.gz ncu*.csv ncu*.log c1.txt c2.txt ./*.progress && rm -f ncu*.csv ncu*.log c1.txt c2.txt ./*.progress)
cat "$out/side_by_side.md"
