#!/usr/bin/env bash
# Offline checks of the helper files: plot.py draws from the committed results, ab_table.py
# sets two of them side by side and variants_table.py (through variants_ab.sh) several,
# backward_table.py reads the backward result and its targets, the CI workflow example is valid
# YAML with the steps a user relies on, sass_mix.py reads ncu's per-instruction page.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 "$root/scripts/plot.py" "$root"/results/h200-*.json --out "$out"
test -s "$out/tflops.png"
test -s "$out/roofline.png"
/usr/bin/python3 "$root/scripts/ab_table.py" --a "$root/tests/data/recorded-h200-hopper-preset-stage7-run1.json" \
  --b "$root/tests/data/recorded-h200-hopper-preset-stage7-run2.json" >"$out/ab.txt"
grep -q "S4096 D64 causal *flash3 " "$out/ab.txt"
# Decode shapes differ in Hkv and Skv alone: each case keeps a line of its own.
/usr/bin/python3 "$root/scripts/ab_table.py" --a "$root/results/h100-decode.json" --b "$root/results/h100-decode.json" >"$out/ab-decode.txt"
test "$(grep -c ' +0\.0% ' "$out/ab-decode.txt")" -eq 216
grep -q "^B64 H32/8 S1/32768 D64 full *flash3 " "$out/ab-decode.txt"
# variants_ab.sh runs every build every round and tables them: two fake builds that write the
# committed decode result.
fake="$out/fake-sdpa-prof"
printf '%s\n' '#!/usr/bin/env bash' 'while [ $# -gt 0 ]; do [ "$1" = --json ] && cp "$RESULT" "$2"; shift; done' >"$fake"
chmod +x "$fake"
RESULT="$root/results/h100-decode.json" OUT="$out" BUILDS="main=$fake same=$fake" AGAINST=cudnn ROUNDS=2 \
  "$root/scripts/gpu/variants_ab.sh" --config configs/decode.json >"$out/variants.txt"
test -s "$out/variants/same-2.json"
grep -Eq "^main at or under cudnn: [0-9]+ of 108 cases" "$out/variants.txt"
grep -q "^same against main: geometric mean 1.0000 over 108 cases" "$out/variants.txt"
# decode_table.py reads results from before the read ceiling (no page_size, no "ceiling") too.
/usr/bin/python3 "$root/scripts/decode_table.py" "$root/tests/data/recorded-h200-hopper-preset-stage7-run1.json" >"$out/decode.txt"
grep -q "^flash3 .* B8 H16/16 Sq4096 Skv4096 D128 .* ok$" "$out/decode.txt"
grep -q "^target flash3 <= cudnn: [0-9]* of [1-9][0-9]* shapes hold" "$out/decode.txt"
# sass_mix.py: a recorded excerpt of ncu's per-instruction page (flash's backward on the H100) by
# opcode and by stall reason; a file without that table is refused by name.
sass="$root/tests/data/ncu-sass-h100-flash-bwd-excerpt.csv"
/usr/bin/python3 "$root/scripts/gpu/sass_mix.py" "$sass" >"$out/sass.txt"
grep -Eq "^HMMA +38\.9M +67\.0$" "$out/sass.txt"
grep -Eq "^total +130\.1M" "$out/sass.txt"
/usr/bin/python3 "$root/scripts/gpu/sass_mix.py" --stalls "$sass" >"$out/stalls.txt"
grep -q "^== short_sb: 33.8% of samples$" "$out/stalls.txt"
if /usr/bin/python3 "$root/scripts/gpu/sass_mix.py" "$root/tests/data/bad_syntax.json" 2>"$out/sass-err.txt"; then
  exit 1
fi
grep -q "no per-instruction table" "$out/sass-err.txt"
# backward_table.py: the committed backward result and the targets read off it; then the same
# with torch:cudnn failed, which a target must call not measured.
/usr/bin/python3 "$root/scripts/backward_table.py" "$root/results/h100-backward.json" >"$out/backward.txt"
grep -Eq "^B8 H16 S4096 D64 bf16 causal +bwd +flash +[0-9.]+ " "$out/backward.txt"
grep -Eq "^  flash against torch:flash: [0-9.]+ ms against [0-9.]+ ms \([0-9.]+x\): (holds|missed)$" "$out/backward.txt"
grep -Eq "^  cudnn against torch:cudnn: [0-9.]+ ms against [0-9.]+ ms \([0-9.]+x\): (holds|missed)$" "$out/backward.txt"
/usr/bin/python3 - "$root/results/h100-backward.json" "$out/backward-failed.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for c in doc["cases"]:
    if c["backend"] == "torch:cudnn":
        c.update(status="failed", reason="cuDNN would not load", timing=None)
json.dump(doc, open(sys.argv[2], "w"))
PY
/usr/bin/python3 "$root/scripts/backward_table.py" "$out/backward-failed.json" >"$out/backward-failed.txt"
grep -Eq "^  cudnn against torch:cudnn: not measured \(torch:cudnn failed: " "$out/backward-failed.txt"
grep -Eq "^  math against torch:math: [0-9]+ kernels per call against [0-9]+: (holds|missed)$" "$out/backward.txt"
# Issue 34's targets appear where a run has flash3: its rows replaced by a copy of flash's backward
# cases at half the time; then flash3 skipped, which a target must call not measured.
/usr/bin/python3 - "$root/results/h100-backward.json" "$out/backward-flash3.json" "$out/backward-no-flash3.json" <<'PY'
import copy, json, sys
doc = json.load(open(sys.argv[1]))
doc["cases"] = [c for c in doc["cases"] if c["backend"] != "flash3"]
skipped = copy.deepcopy(doc)
for c in [c for c in doc["cases"] if c["backend"] == "flash" and c["problem"].get("pass") == "bwd"]:
    gone = copy.deepcopy(c)
    gone.update(backend="flash3", status="skipped", reason="needs sm_90 exactly", timing=None)
    skipped["cases"].append(gone)
    twin = copy.deepcopy(c)
    twin["backend"] = "flash3"
    twin["timing"]["median_ms"] /= 2
    doc["cases"].append(twin)
json.dump(doc, open(sys.argv[2], "w"))
json.dump(skipped, open(sys.argv[3], "w"))
PY
/usr/bin/python3 "$root/scripts/backward_table.py" "$out/backward-flash3.json" >"$out/backward-flash3.txt"
grep -Eq "^  flash3 against flash: [0-9.]+ ms against [0-9.]+ ms \(2\.00x faster, target 1\.6x\): holds$" "$out/backward-flash3.txt"
grep -Eq "^  flash3 against cudnn: [0-9.]+ ms against [0-9.]+ ms \([0-9.]+x\): (holds|missed)$" "$out/backward-flash3.txt"
/usr/bin/python3 "$root/scripts/backward_table.py" "$out/backward-no-flash3.json" >"$out/backward-no-flash3.txt"
grep -Eq "^  flash3 against cudnn: not measured \(flash3 skipped: " "$out/backward-no-flash3.txt"
/usr/bin/python3 - "$root/ci-example/gpu-regressions.yml" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
steps = doc["jobs"]["sdpa-prof"]["steps"]
names = [s.get("name", s.get("uses", "")) for s in steps]
assert any("compare" in s.get("run", "") for s in steps), names
assert "self-hosted" in doc["jobs"]["sdpa-prof"]["runs-on"], doc["jobs"]["sdpa-prof"]["runs-on"]
import re
labels = [m.group(1) for s in steps for m in re.finditer(r"ctest .*-L '([^']*)'", s.get("run", ""))]
assert any("gpu" in l.split("|") for l in labels), f"no step runs the gpu label on the GPU runner: {labels}"
print("workflow ok:", names)
PY
