#!/usr/bin/env bash
# Usage: tests/fuzz/run_fuzzers.sh [SECONDS]
# Builds the libFuzzer targets (clang, ASan + UBSan) in build-fuzz/ and runs each for SECONDS
# (default 60) on a copy of its seed corpus in tests/fuzz/corpus/, so the repository is never
# written. Fails on any crash, sanitizer report or leak; the input that caused it is kept in
# build-fuzz/artifacts/ (add it to the corpus once its cause is fixed).
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
cmake -S "$root/tests/fuzz" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="${FUZZ_CXX:-clang++}" >/dev/null
cmake --build "$build"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$build/artifacts"
status=0
for target in preset cli_numbers result records kernel_names escaping; do
  rm -f "$build/artifacts/$target-"*
  cp -r "$root/tests/fuzz/corpus/$target" "$work/$target"
  log="$build/artifacts/$target.log"
  # JSON's tokens and our keys for the readers; a command-line value is short.
  options=(-dict="$root/tests/fuzz/json.dict")
  [ "$target" = cli_numbers ] && options=(-max_len=256)
  [ "$target" = kernel_names ] && options=(-max_len=1100000)  # names of a megabyte, as a record line holds
  [ "$target" = escaping ] && options=()
  # One process, one input at a time; -timeout: an input taking this long is a hang.
  if "$build/fuzz_$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 "${options[@]}" \
       -artifact_prefix="$build/artifacts/$target-" "$work/$target" >"$log" 2>&1; then
    echo "fuzz_$target: ok, $(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$') runs in ${seconds} s, corpus $(ls "$work/$target" | wc -l) inputs"
  else
    status=1
    echo "fuzz_$target: FAILED (log: $log)"
    grep -E -m1 -A12 'ERROR: |runtime error|terminate called|Assertion' "$log" | cut -c1-300 || tail -20 "$log"
    ls "$build/artifacts/$target-"* 2>/dev/null || true
  fi
done
exit $status
