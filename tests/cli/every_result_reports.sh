#!/usr/bin/env bash
# Usage: every_result_reports.sh SDPA_PROF RESULTS_DIR
# Every result file kept in the tree, of every schema version, still reads: `report` prints it at
# 100 columns with no line wider, and with --kernels.
set -euo pipefail
tool=$1
failed=0
for result in "$2"/*.json; do
  if ! out=$(COLUMNS=100 "$tool" report "$result" 2>&1); then
    echo "FAIL: $result: $out" | head -3
    failed=1
    continue
  fi
  wide=$(printf '%s\n' "$out" | python3 -c 'import sys; print(sum(len(l.rstrip("\n")) > 100 for l in sys.stdin))')
  [ "$wide" -eq 0 ] || { echo "FAIL: $result: $wide lines wider than 100"; failed=1; }
  COLUMNS=100 "$tool" report "$result" --kernels >/dev/null || { echo "FAIL: $result --kernels"; failed=1; }
  echo "$result: $(printf '%s\n' "$out" | wc -l) lines"
done
exit $failed
