#!/usr/bin/env bash
# Usage: table_fits.sh SDPA_PROF RESULT.json
# The table of a saved run at several terminal widths (COLUMNS) and piped without one (120):
# every line fits, and each case is one line of the table.
set -euo pipefail
tool=$1
result=$2
check() {  # WIDTH, then the command's output on stdin
  python3 -c '
import json, sys
width, result = int(sys.argv[1]), sys.argv[2]
lines = sys.stdin.read().split("\n")
cases = json.load(open(result))["cases"]
long = [l for l in lines if len(l) > width]
assert not long, f"{len(long)} lines wider than {width}: {long[0]!r}"
rows = lines[1:1 + len(cases)]
for case, row in zip(cases, rows):
    backend = case["backend"]
    assert row.split()[0] == backend, f"expected a row for {backend}, got {row!r}"
assert lines[1 + len(cases)].split()[0] not in {c["backend"] for c in cases}, "more rows than cases"
print(f"width {width}: {len(cases)} cases on {len(cases)} lines, {len(lines)} lines, none wider")
' "$1" "$result"
}
for width in 100 120 80; do
  COLUMNS=$width "$tool" report "$result" | check "$width"
done
env -u COLUMNS "$tool" report "$result" | check 120
