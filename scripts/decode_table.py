#!/usr/bin/env python3
"""One line per case of sdpa-prof JSON reports of decode shapes, bandwidth first.

    python3 scripts/decode_table.py decode.json [decode_paged.json ...]

Columns: backend, shape (B, H/Hkv, Sq, Skv, D, page size), median ms, TB/s (the bytes a forward
must move, Q K V read and O written once, over the median), % of the recorded HBM read ceiling,
the ceiling the case is held against (read_bandwidth or compute; "-" in results without a read
ceiling), then the status or the reason. Under the table: the far-from-read-ceiling findings,
and the issue 32 targets read off these runs (flash3 against cudnn per shape; >= 85% of the read
ceiling at Skv >= 32768 and B >= 16). Exits 1 when a case failed.
"""
import json
import sys

TARGET_SHARE = 85.0


def shape(p):
    page = f" page{p['page_size']}" if "page_size" in p else ""
    causal = " causal" if p["causal"] else ""
    return (f"B{p['batch']} H{p['heads']}/{p['kv_heads']} Sq{p['seq_q']} Skv{p['seq_kv']} D{p['head_dim']}"
            f"{page} {p['dtype']}{causal}")


def fmt(value, spec):
    return format("-", ">" + spec.split(".")[0]) if value is None else format(value, spec)


def main():
    cases = []
    for path in sys.argv[1:]:
        with open(path) as f:
            cases += json.load(f)["cases"]
    print(f"{'backend':<12} {'shape':<40} {'ms':>9} {'TB/s':>6} {'%read':>6} {'ceiling':<15} status")
    findings = []
    for c in cases:
        roof = c.get("roofline") or {}
        timing = c.get("timing") or {}
        status = c["status"] if c["status"] == "ok" else f"{c['status']}: {c.get('reason', '')[:70]}"
        print(f"{c['backend']:<12} {shape(c['problem']):<40} {fmt(timing.get('median_ms'), '9.4f')} "
              f"{fmt(roof.get('achieved_tb_per_s'), '6.2f')} {fmt(roof.get('percent_of_read_bandwidth'), '6.1f')} "
              f"{roof.get('ceiling', '-'):<15} {status}")
        findings += [f"{c['backend']} {shape(c['problem'])}: {f['text']}" for f in c.get("findings", [])
                     if f["rule"] == "far-from-read-ceiling"]
    if findings:
        print("\nfar from the read ceiling:")
        print("\n".join("  " + f for f in findings))

    timed = {(c["backend"], shape(c["problem"])): c for c in cases if c["status"] == "ok" and c.get("timing")}
    shapes = sorted({s for _, s in timed})
    slower = [s for s in shapes if ("flash3", s) in timed and ("cudnn", s) in timed
              and timed[("flash3", s)]["timing"]["median_ms"] > timed[("cudnn", s)]["timing"]["median_ms"]]
    compared = sum(1 for s in shapes if ("flash3", s) in timed and ("cudnn", s) in timed)
    print(f"\ntarget flash3 <= cudnn: {compared - len(slower)} of {compared} shapes hold")
    for s in slower:
        print(f"  {s}: flash3 {timed[('flash3', s)]['timing']['median_ms']:.4f} ms, "
              f"cudnn {timed[('cudnn', s)]['timing']['median_ms']:.4f} ms")
    long_ones = [c for c in timed.values() if c["backend"].startswith("flash3") and c["problem"]["seq_kv"] >= 32768
                 and c["problem"]["batch"] >= 16 and "percent_of_read_bandwidth" in (c.get("roofline") or {})]
    short = [c for c in long_ones if c["roofline"]["percent_of_read_bandwidth"] < TARGET_SHARE]
    print(f"target >= {TARGET_SHARE:.0f}% of the read ceiling (flash3, Skv >= 32768, B >= 16): "
          f"{len(long_ones) - len(short)} of {len(long_ones)} cases hold")
    return 1 if any(c["status"] == "failed" for c in cases) else 0


if __name__ == "__main__":
    sys.exit(main())
