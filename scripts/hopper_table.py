#!/usr/bin/env python3
"""One line per case of sdpa-prof JSON reports: time, clock, and what the counters saw.

    python3 scripts/hopper_table.py hopper.json [long.json ...]

Columns: backend, B/H/S/D, causal, median ms, TFLOP/s, median SM clock (MHz), the time at the
peak clock (clock_normalized_ms), DRAM GB per forward and the dominant kernel's tensor-pipe
activity and achieved occupancy (%), from the counter pass ("-" where a case has none).
"""
import json
import sys

TENSOR = "sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_cycles_active.avg.pct_of_peak_sustained_elapsed"
ACHIEVED = "sm__warps_active.avg.pct_of_peak_sustained_active"


def fmt(value, spec):
    return format("-", ">" + spec.split(".")[0]) if value is None else format(value, spec)


def row(case):
    p = case["problem"]
    t = case.get("timing") or {}
    kernels = (case.get("profile") or {}).get("kernels") or []
    dominant = max(kernels, key=lambda k: k.get("mean_us", 0), default={})
    counters = dominant.get("counters") or {}
    dram = (case.get("roofline") or {}).get("measured_dram_bytes")
    shape = f"B{p['batch']} H{p['heads']} S{p['seq_q']} D{p['head_dim']}"
    return (f"{case['backend']:<28} {shape:<22} {'causal' if p['causal'] else 'full':<6} "
            f"{fmt(t.get('median_ms'), '8.3f')} {fmt(case.get('tflops'), '6.0f')} "
            f"{fmt(t.get('sm_clock_mhz'), '5.0f')} {fmt(t.get('clock_normalized_ms'), '8.3f')} "
            f"{fmt(dram and dram / 1e9, '7.3f')} {fmt(counters.get(TENSOR), '5.1f')} "
            f"{fmt(counters.get(ACHIEVED), '5.1f')} {case['status']}")


def main():
    print(f"{'backend':<28} {'shape':<22} {'mask':<6} {'ms':>8} {'TF/s':>6} {'MHz':>5} "
          f"{'ms@peak':>8} {'DRAM GB':>7} {'tens%':>5} {'ach%':>5} status")
    for path in sys.argv[1:]:
        with open(path) as f:
            for case in json.load(f)["cases"]:
                print(row(case))


if __name__ == "__main__":
    main()
