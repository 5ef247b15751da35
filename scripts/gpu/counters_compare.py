#!/usr/bin/env python3
"""The counter pass against Nsight Compute: side-by-side tables from scripts/gpu/counters_check.sh.

--metrics FILE: the metric names a result's counter pass collected, comma-separated (for ncu).
--out DIR: reads c1.json, c2.json (counters), n1.json, n2.json (no counters, before them),
n1-after.json, n2-after.json (no counters, after them; optional), ncu_*.csv (kernel replay) and
ncu-app_*.csv (application replay; optional) there, prints Markdown: fused kernels against ncu,
naive-inplace's DRAM bytes against its own count, and the timing medians with and without the
counter pass.
--alternating DIR: the runs of ALTERNATE=K (rounds of a run without and one with the counter pass,
a*-rK.json and n*-rK.json): the medians with against the spread of the runs without.
"""
import argparse
import csv
import glob
import json
import os
import sys

REQUIRED = ("sm__warps_active.avg.pct_of_peak_sustained_active", "dram__bytes_read.sum", "dram__bytes_write.sum",
            "sm__throughput.avg.pct_of_peak_sustained_elapsed")
REL_TOLERANCE = 0.03
POINT_TOLERANCE = 0.5


def load(path):
    with open(path) as f:
        return json.load(f)


def metric_names(result):
    names = set()
    for case in result["cases"]:
        for kernel in (case.get("profile") or {}).get("kernels", []):
            names.update(kernel.get("counters", {}))
    return sorted(names)


def ncu_values(path):
    """Metric name -> value of the one profiled launch in an ncu --csv --print-units base file."""
    values, kernel = {}, ""
    with open(path, newline="") as f:
        rows = [line for line in f if line.startswith('"')]
    for row in csv.DictReader(rows):
        kernel = row.get("Kernel Name", kernel)
        try:
            values[row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            continue
    return kernel, values


def agrees(name, ours, theirs):
    if theirs == 0:
        return ours == 0
    if abs(ours / theirs - 1) <= REL_TOLERANCE:
        return True
    return ".pct" in name and abs(ours - theirs) <= POINT_TOLERANCE


def case_label(case):
    p = case["problem"]
    return f"{case['backend']} S{p['seq_q']} D{p['head_dim']}"


def fused_rows(out, prefix="ncu_", every_case=True):
    """Side-by-side rows and the number of required metrics outside tolerance. every_case: a fused
    case without an ncu file is a failure (else it is left out)."""
    lines = ["| case | metric | sdpa-prof | ncu | diff | agrees |", "|---|---|---|---|---|---|"]
    failures = 0
    for name in ("c1.json", "c2.json"):
        path = os.path.join(out, name)
        if not os.path.exists(path):
            continue
        for case in load(path)["cases"]:
            profile = case.get("profile") or {}
            fused = [k for k in profile.get("kernels", []) if k["category"] == "fused_attention"]
            if not fused:
                continue
            p = case["problem"]
            label = case_label(case)
            csv_path = os.path.join(out, f"{prefix}{case['backend']}_{p['seq_q']}.csv")
            if not os.path.exists(csv_path):
                if not every_case:
                    continue
                lines.append(f"| {label} | (no ncu result: {os.path.basename(csv_path)}) | | | | NO |")
                failures += 1
                continue
            _, theirs = ncu_values(csv_path)
            counters = fused[0].get("counters", {})
            for metric in sorted(m for m in REQUIRED if m not in counters or m not in theirs):
                side = "sdpa-prof" if metric not in counters else "ncu"
                lines.append(f"| {label} | `{metric}` (missing from {side}) | | | | NO |")
                failures += 1
            for metric, ours in sorted(counters.items()):
                if metric not in theirs:
                    continue
                ok = agrees(metric, ours, theirs[metric])
                required = metric in REQUIRED
                failures += required and not ok
                diff = f"{100 * (ours / theirs[metric] - 1):+.2f}%" if theirs[metric] else "-"
                lines.append(f"| {label} | `{metric}` | {ours:.4g} | "
                             f"{theirs[metric]:.4g} | {diff} | {'yes' if ok else 'NO'}{'' if required else ' (info)'} |")
    return lines, failures


def dram_bytes(profile):
    total = 0.0
    for k in profile["kernels"]:
        c = k.get("counters", {})
        if "dram__bytes_read.sum" not in c or "dram__bytes_write.sum" not in c:
            return None
        total += k["per_forward"] * (c["dram__bytes_read.sum"] + c["dram__bytes_write.sum"])
    return total


def naive_rows(out):
    lines = []
    for case in load(os.path.join(out, "c1.json"))["cases"]:
        if case["backend"] != "naive-inplace" or not case.get("profile"):
            continue
        prof = case["profile"]
        measured = dram_bytes(prof)
        source = prof.get("counters_source") or {}
        expected = source.get("expected_dram_bytes_per_forward")
        if measured is None or not expected:
            lines.append(f"naive-inplace: no counters ({prof.get('counters_skipped', '')})")
            continue
        lines.append(f"naive-inplace DRAM bytes per forward: measured {measured / 1e9:.3f} GB, its own count "
                     f"{expected / 1e9:.3f} GB ({100 * (measured / expected - 1):+.1f}%, target within 10%)")
        for f in prof["findings"]:
            if f["rule"] == "dram-bound":
                lines.append(f"finding: {f['text']}")
    return lines


def clock_columns(x, y):
    """The SM clocks of both runs and the change of the clock-normalised times: a power-capped
    kernel's median moves with the clock the cap allowed that run, which the counter pass does
    not set."""
    if not (x.get("sm_clock_mhz") and y.get("sm_clock_mhz") and x.get("clock_normalized_ms")
            and y.get("clock_normalized_ms")):
        return "- | -"
    change = 100 * (x["clock_normalized_ms"] / y["clock_normalized_ms"] - 1)
    return f"{x['sm_clock_mhz']:.0f} / {y['sm_clock_mhz']:.0f} | {change:+.2f}%"


def timing_by_case(path):
    if not os.path.exists(path):
        return {}
    return {(c["backend"], c["problem"]["seq_q"]): c["timing"] for c in load(path)["cases"] if c.get("timing")}


def timing_rows(out):
    """Counters on against the --no-counters runs before and, if there, after it: the change is
    against their mean, and the noise is both runs' spreads plus the drift between the two
    runs without counters (processes minutes apart differ by that much with nothing changed)."""
    lines = ["| case | median ms, counters on | --no-counters before / after | change | noise "
             "| SM MHz, on / off | change at the same clock |",
             "|---|---|---|---|---|---|---|"]
    for with_name, without_name in (("c1.json", "n1"), ("c2.json", "n2")):
        on = os.path.join(out, with_name)
        before = timing_by_case(os.path.join(out, f"{without_name}.json"))
        after = timing_by_case(os.path.join(out, f"{without_name}-after.json"))
        if not (os.path.exists(on) and before):
            continue
        for c in load(on)["cases"]:
            key = (c["backend"], c["problem"]["seq_q"])
            y = before.get(key)
            if not c.get("timing") or not y:
                continue
            x, z = c["timing"], after.get(key)
            off_ms = y["median_ms"] if z is None else (y["median_ms"] + z["median_ms"]) / 2
            noise = x["relative_spread"] + y["relative_spread"]
            offs = f"{y['median_ms']:.4f}"
            if z is not None:
                noise += abs(z["median_ms"] / y["median_ms"] - 1)
                offs += f" / {z['median_ms']:.4f}"
            lines.append(f"| {case_label(c)} | {x['median_ms']:.4f} | {offs} | "
                         f"{100 * (x['median_ms'] / off_ms - 1):+.2f}% | {100 * noise:.2f}% | "
                         f"{clock_columns(x, y)} |")
    return lines


def alternating_rows(out):
    """ALTERNATE=K runs: K rounds of a run without (n*-rK.json) and one with the counter pass
    (a*-rK.json), then one more without. Per case, the mean of the runs with against the mean of
    the runs without, beside the spread of the runs without between processes (max - min over
    their mean): the counter pass changes nothing when the first lies inside the second. The
    same at the same clock (clock-normalised medians), since a process's first case runs at the
    clock the GPU comes to it with."""
    def runs(tag, shape):
        found = sorted(glob.glob(os.path.join(out, f"{tag}{shape}-r*.json")),
                       key=lambda p: int(p.rsplit("-r", 1)[1].split(".")[0]))
        return [timing_by_case(p) for p in found]

    def change_and_spread(on, off, key, field):
        xs = [r[key][field] for r in on if r.get(key, {}).get(field)]
        ys = [r[key][field] for r in off if r.get(key, {}).get(field)]
        if not xs or len(ys) < 2:
            return None
        mean_off = sum(ys) / len(ys)
        return xs, ys, sum(xs) / len(xs) / mean_off - 1, (max(ys) - min(ys)) / mean_off

    lines = ["| case | medians with counters, ms | medians without, ms | with / without | "
             "spread without | inside | at the same clock: change, spread | inside |",
             "|---|---|---|---|---|---|---|---|"]
    outside = 0
    for shape in ("1", "2"):
        on, off = runs("a", shape), runs("n", shape)
        if not on or not off:
            continue
        for key in on[0]:
            plain = change_and_spread(on, off, key, "median_ms")
            if plain is None:
                continue
            xs, ys, change, spread = plain
            inside = abs(change) <= spread
            outside += not inside
            clock = change_and_spread(on, off, key, "clock_normalized_ms")
            at_clock = "- | -"
            if clock is not None:
                at_clock = (f"{100 * clock[2]:+.2f}%, {100 * clock[3]:.2f}% | "
                            f"{'yes' if abs(clock[2]) <= clock[3] else 'NO'}")
            lines.append(f"| {key[0]} S{key[1]} | {' '.join(f'{x:.4f}' for x in xs)} | "
                         f"{' '.join(f'{y:.4f}' for y in ys)} | {100 * change:+.2f}% | "
                         f"{100 * spread:.2f}% | {'yes' if inside else 'NO'} | {at_clock} |")
    return lines, outside


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--metrics", help="a result JSON: print its counter metric names, comma-separated")
    ap.add_argument("--out", help="the folder counters_check.sh wrote")
    ap.add_argument("--alternating", help="the folder of an ALTERNATE=K counters_check.sh run")
    args = ap.parse_args()
    if args.alternating:
        rows, outside = alternating_rows(args.alternating)
        print("\n".join(["## Timing with and without the counter pass, alternating runs", ""] + rows))
        print(f"\ncases outside the spread between runs without counters: {outside}")
        return 0
    if args.metrics:
        print(",".join(metric_names(load(args.metrics))))
        return 0
    fused, failures = fused_rows(args.out)
    print("\n".join(["## Fused kernels: sdpa-prof's counter pass against ncu", ""] + fused + [""]))
    app, _ = fused_rows(args.out, prefix="ncu-app_", every_case=False)
    if len(app) > 2:
        print("\n".join(["## The same against ncu --replay-mode application (the whole program run once "
                         "per pass, as our user replay runs the whole forward; no save and restore)", ""]
                        + app + [""]))
    print("\n".join(["## naive-inplace", ""] + naive_rows(args.out) + [""]))
    print("\n".join(["## Timing with and without the counter pass", ""] + timing_rows(args.out)))
    print(f"\nrequired metrics outside tolerance: {failures}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
