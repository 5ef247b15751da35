#!/usr/bin/env bash
# Usage: expect.sh EXIT_CODE OUTPUT_REGEX [--absent FILE] [--skip-without-gpu] -- COMMAND...
# Runs COMMAND, then checks its exit code, that its output matches OUTPUT_REGEX, and that
# FILE (if given) was not left behind. With --skip-without-gpu, COMMAND exiting 3 with the tool's
# sentence for a machine without a CUDA device skips the test (exit 77); any other exit 3 (a GPU
# or driver failure, an internal error) fails it.
set -u
want_code=$1
want_regex=$2
shift 2
absent=""
if [ "$1" = "--absent" ]; then
  absent=$2
  shift 2
fi
skip_without_gpu=""
if [ "$1" = "--skip-without-gpu" ]; then
  skip_without_gpu=1
  shift
fi
[ "$1" = "--" ] && shift
[ -n "$absent" ] && rm -f "$absent"
output=$("$@" 2>&1)
code=$?
echo "$output"
if [ -n "$skip_without_gpu" ] && [ "$code" = 3 ] && grep -q "no CUDA GPU is present" <<<"$output"; then
  echo "SKIP: no CUDA device here"
  exit 77
fi
if [ "$code" != "$want_code" ]; then
  echo "FAIL: exit code $code, expected $want_code"
  exit 1
fi
if ! grep -Eq -- "$want_regex" <<<"$output"; then
  echo "FAIL: output does not match /$want_regex/"
  exit 1
fi
if [ -n "$absent" ] && ls "$absent"* >/dev/null 2>&1; then
  echo "FAIL: $absent was left behind"
  exit 1
fi
exit 0
