#!/usr/bin/env bash
# Usage: expect.sh EXIT_CODE OUTPUT_REGEX [--absent FILE] [--skip-on CODE] -- COMMAND...
# Runs COMMAND, then checks its exit code, that its output matches OUTPUT_REGEX, and that
# FILE (if given) was not left behind. With --skip-on, COMMAND exiting CODE (3: no GPU here)
# skips the test (exit 77).
set -u
want_code=$1
want_regex=$2
shift 2
absent=""
if [ "$1" = "--absent" ]; then
  absent=$2
  shift 2
fi
skip_on=""
if [ "$1" = "--skip-on" ]; then
  skip_on=$2
  shift 2
fi
[ "$1" = "--" ] && shift
[ -n "$absent" ] && rm -f "$absent"
output=$("$@" 2>&1)
code=$?
echo "$output"
if [ -n "$skip_on" ] && [ "$code" = "$skip_on" ]; then
  echo "SKIP: exit code $code"
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
