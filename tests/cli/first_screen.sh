#!/usr/bin/env bash
# Usage: first_screen.sh SDPA_PROF RESULT.json MAX_LINES
# The default report of a saved run at 100 columns is one screen: at most MAX_LINES lines, none
# wider than 100, each finding said once per backend and kind; --kernels and --wide still show a
# library kernel's occupancy note, which the first screen leaves out.
set -euo pipefail
tool=$1
result=$2
max_lines=$3
first=$(COLUMNS=100 "$tool" report "$result")
lines=$(printf '%s\n' "$first" | wc -l)
wide=$(printf '%s\n' "$first" | python3 -c 'import sys; print(sum(len(l.rstrip("\n")) > 100 for l in sys.stdin))')
echo "default report at 100 columns: $lines lines, $wide wider than 100"
[ "$lines" -le "$max_lines" ] || { echo "FAIL: more than $max_lines lines"; exit 1; }
[ "$wide" -eq 0 ] || { echo "FAIL: lines wider than 100 columns"; exit 1; }
repeated=$(printf '%s\n' "$first" | sed -n '/^findings:/,/^$/p' | grep -E '^  [^ ]' | cut -d: -f1-2 | sort | uniq -d)
[ -z "$repeated" ] || { echo "FAIL: a finding said more than once: $repeated"; exit 1; }
# cuDNN's kernel (cudnn) and cuBLAS's GEMMs (math, naive) are the library kernels of the default run.
library='^  (cudnn|math|naive|naive-inplace): low occupancy'
if printf '%s\n' "$first" | grep -Eq "$library"; then
  echo "FAIL: a library kernel's occupancy note on the first screen"
  exit 1
fi
for flag in --kernels --wide; do
  everything=$(COLUMNS=100 "$tool" report "$result" "$flag")
  grep -Eq "$library" <<<"$everything" || { echo "FAIL: $flag lost the library notes"; exit 1; }
done
echo "ok"
