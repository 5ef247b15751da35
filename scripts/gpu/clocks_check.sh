#!/usr/bin/env bash
# One call on the GPU machine for the clocks and power of each case (issue 16): flash and cuDNN at
# S4096 D128 with --kernels, the default sweep, and a run without NVML; a per-case table of clocks,
# power and clock-event reasons last. Build here first (cmake --build build) and carry `build`.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
out=${OUT:-/tmp/sdpa-prof-out}
mkdir -p "$out"
tool_libs=/usr/local/cuda/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
with_libs() { LD_LIBRARY_PATH=$tool_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$@"; }
tool=$build/src/sdpa-prof

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit \
  --format=csv,noheader

echo "== flash, cudnn at S4096 D128"
with_libs "$tool" --backend flash,cudnn --seq 4096 --head-dim 128 --kernels --json "$out/d128.json" \
  >"$out/d128.txt" 2>"$out/d128.progress.txt"
d128_rc=$?
echo "== default sweep"
with_libs "$tool" --json "$out/default.json" >"$out/default.txt" 2>"$out/default.progress.txt"
default_rc=$?
echo "== without NVML"
SDPA_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 with_libs "$tool" --backend flash --seq 1024 --no-profile \
  >"$out/no-nvml.txt" 2>"$out/no-nvml.progress.txt"
no_nvml_rc=$?
grep -E "^power:" "$out/no-nvml.progress.txt"

echo "== results (rc: d128 $d128_rc, default $default_rc, without NVML $no_nvml_rc)"
grep -E "^power:" "$out/d128.progress.txt"
cat "$out/d128.txt"
cat "$out/default.txt"
python3 - "$out/d128.json" "$out/default.json" <<'PY'
import json, sys
fmt = "{:<14} {:<18} {:>9} {:>9} {:>6} {:>7} {:>7} {:>7} {:>5} {:>7} {:>10}  {}"
print(fmt.format("backend", "shape", "median ms", "at peak", "clock", "%peak", "mean W", "high W", "temp", "limit W", "NVML clock", "reasons"))
for path in sys.argv[1:]:
    for c in json.load(open(path))["cases"]:
        t = c.get("timing")
        if not t:
            continue
        p = t.get("power") or {}
        n = lambda v, f="{:.0f}": "-" if v is None else f.format(v)
        shape = "S{} D{}".format(c["problem"]["seq_q"], c["problem"]["head_dim"])
        peak = t.get("sm_clock_peak_mhz") or 0
        print(fmt.format(c["backend"], shape, n(t["median_ms"], "{:.3f}"), n(t.get("clock_normalized_ms"), "{:.3f}"),
                         n(t["sm_clock_mhz"]), n(100 * t["sm_clock_mhz"] / peak if peak else None, "{:.1f}%"),
                         n(p.get("mean_w")), n(p.get("highest_w")), n(p.get("temperature_c")), n(p.get("limit_w")),
                         n(p.get("sm_clock_mhz")), ",".join(p.get("clock_event_reasons") or []) or "-"))
PY
exit $((d128_rc != 0 || default_rc != 0 || no_nvml_rc != 0))
