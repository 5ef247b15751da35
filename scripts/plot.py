#!/usr/bin/python3
"""Plots from sdpa-prof result files (written by `sdpa-prof --json`).

Writes, into --out:
  tflops.png          TFLOP/s against sequence length, one line per backend (log axes)
  kernel-time.png     each kernel category's share of the GPU time per forward, per backend and
                      shape, the total above each bar (needs results with a kernel profile,
                      schema version 2 or later)
  kernels.png         kernels per forward, per backend and shape (same)
  roofline.png        TFLOP/s against arithmetic intensity, one point per case, under the GPU's
                      measured ceilings (bf16/fp16 GEMM, HBM read bandwidth where recorded
                      (schema 6), else device-to-device copy: what `sdpa-prof ceilings`
                      prints, recorded in each result); the intensity uses
                      the DRAM bytes the counter pass measured (schema 5) where there are any,
                      else the problem's minimum bytes (hollow marker)

Needs python3 with matplotlib only (Debian: python3-matplotlib).
Usage: scripts/plot.py RESULT.json [RESULT.json ...] [--out DIR] [--ceilings FILE]
"""
import argparse
import json
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"plot.py: cannot read {path}: {e}")
    if data.get("schema") != "sdpa-prof/result":
        sys.exit(f"plot.py: {path} is not an sdpa-prof result")
    return data


def pass_suffix(p):
    """ " bwd" or " fwd+bwd" for a case of those passes; "" for the forward (and older files)."""
    return "" if p.get("pass", "fwd") == "fwd" else f" {p['pass']}"


def series_label(case, many_files, path):
    p = case["problem"]
    label = f"{case['backend']} D{p['head_dim']} {p['dtype']}{'' if p['causal'] else ' non-causal'}{pass_suffix(p)}"
    return f"{label} ({os.path.basename(path)})" if many_files else label


def shape_label(p):
    return f"S{p['seq_q']} D{p['head_dim']}{pass_suffix(p)}"


def plot_tflops(results, out):
    lines = defaultdict(list)
    for path, data in results:
        for case in data["cases"]:
            if case["status"] == "ok" and "tflops" in case:
                lines[series_label(case, len(results) > 1, path)].append((case["problem"]["seq_q"], case["tflops"]))
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for label, points in sorted(lines.items()):
        points.sort()
        ax.plot([s for s, _ in points], [t for _, t in points], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    seqs = sorted({s for points in lines.values() for s, _ in points})
    ax.set_xticks(seqs, [str(s) for s in seqs])
    ax.minorticks_off()
    ax.set_xlabel("sequence length")
    ax.set_ylabel("TFLOP/s (visible pairs only)")
    device = results[0][1]["environment"].get("device") or {}
    ax.set_title(f"Attention throughput on {device.get('name', 'unknown GPU')}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(os.path.join(out, "tflops.png"), dpi=120)
    plt.close(fig)


def profiled_cases(results):
    for _, data in results:
        for case in data["cases"]:
            if case["status"] == "ok" and case.get("profile"):
                yield case


def plot_kernel_time(cases, out):
    # Shares on a linear axis: stacked bars on a log axis would stretch the small categories.
    categories = sorted({k["category"] for c in cases for k in c["profile"]["kernels"]})
    labels = [f"{c['backend']}\n{shape_label(c['problem'])}" for c in cases]
    times = {category: [sum(k["per_forward"] * k["mean_us"] for k in c["profile"]["kernels"] if k["category"] == category) / 1000
                        for c in cases]
             for category in categories}
    totals = [sum(times[category][i] for category in categories) for i in range(len(cases))]
    positions = range(len(cases))  # one bar per case, even where two files hold the same label
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(cases)), 5.5))
    bottom = [0.0] * len(cases)
    for category in categories:
        shares = [100 * t / total if total > 0 else 0 for t, total in zip(times[category], totals)]
        ax.bar(positions, shares, bottom=bottom, label=category)
        bottom = [b + s for b, s in zip(bottom, shares)]
    for x, total in zip(positions, totals):
        ax.annotate(f"{total:.3g} ms", (x, 100), xytext=(0, 3), textcoords="offset points", ha="center", fontsize=7)
    ax.set_xticks(positions, labels)
    ax.set_ylim(0, 108)
    ax.set_ylabel("share of kernel time per call (%)")
    ax.set_title("Where the time goes: kernel time per call by category (total above each bar)")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "kernel-time.png"), dpi=120)
    plt.close(fig)


def plot_kernel_counts(cases, out):
    labels = [f"{c['backend']}\n{shape_label(c['problem'])}" for c in cases]
    kernels = [c["profile"]["kernels_per_forward"] for c in cases]
    memcpys = [c["profile"].get("memcpys_per_forward", 0) for c in cases]
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(cases)), 5))
    ax.bar(labels, kernels, label="kernels")
    ax.bar(labels, memcpys, bottom=kernels, label="memcpys")
    ax.set_ylabel("per call (forward, backward or both: the bar's pass)")
    ax.set_title("Launches per call")
    ax.legend()
    ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "kernels.png"), dpi=120)
    plt.close(fig)


def ceilings_from_text(path):
    """The ceilings as `sdpa-prof ceilings` prints them: TFLOP/s per dtype and TB/s of copy."""
    found = {}
    try:
        with open(path) as f:
            for line in f:
                words = line.split()
                if "GEMM" in words and "TFLOP/s" in words:
                    found[f"{words[0]}_gemm_tflops"] = float(words[words.index("TFLOP/s") - 1])
                elif "copy" in words and "TB/s" in words:
                    found["copy_tb_per_s"] = float(words[words.index("TB/s") - 1])
                elif "read" in words and "TB/s" in words:
                    found["read_tb_per_s"] = float(words[words.index("TB/s") - 1])
    except (OSError, ValueError) as e:
        sys.exit(f"plot.py: cannot read the ceilings in {path}: {e}")
    if "copy_tb_per_s" not in found or "bf16_gemm_tflops" not in found:
        sys.exit(f"plot.py: {path} is not what `sdpa-prof ceilings` prints")
    return found


def plot_roofline(results, ceilings, out):
    points = []  # (label, intensity, tflops, measured)
    for path, data in results:
        for case in data["cases"]:
            roof = case.get("roofline")
            if case["status"] != "ok" or not roof or "tflops" not in case:
                continue
            measured = "measured_arithmetic_intensity" in roof
            intensity = roof["measured_arithmetic_intensity"] if measured else roof["arithmetic_intensity"]
            points.append((f"{case['backend']} {shape_label(case['problem'])}", intensity, case["tflops"], measured,
                           case["problem"]["dtype"]))
    if not points:
        return False
    fig, ax = plt.subplots(figsize=(9, 6))
    lows, highs = min(p[1] for p in points) / 4, max(p[1] for p in points) * 4
    if ceilings:
        # The read ceiling where it was measured (a forward reads far more than it writes), else the copy's.
        bandwidth = ceilings.get("read_tb_per_s") or ceilings["copy_tb_per_s"]  # TB/s x FLOP/byte = TFLOP/s
        bandwidth_name = "HBM read" if ceilings.get("read_tb_per_s") else "copy"
        for dtype in sorted({p[4] for p in points}):
            peak = ceilings.get(f"{dtype}_gemm_tflops")
            if not peak:
                continue
            ridge = peak / bandwidth
            xs = [lows, min(max(ridge, lows), highs), highs]
            ax.plot(xs, [min(peak, x * bandwidth) for x in xs], color="black", lw=1)
            ax.annotate(f"{dtype} GEMM {peak:.0f} TFLOP/s", (highs, peak), xytext=(-4, 4), textcoords="offset points",
                        ha="right", fontsize=8)
        ax.annotate(f"{bandwidth_name} {bandwidth:.2f} TB/s", (lows, lows * bandwidth), xytext=(4, 6), textcoords="offset points",
                    fontsize=8, rotation=30)
    for label, x, y, measured, _ in points:
        ax.scatter([x], [y], marker="o", facecolors=None if measured else "none", edgecolors="C0")
        ax.annotate(label, (x, y), xytext=(4, -10), textcoords="offset points", fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per DRAM byte; hollow: against the minimum bytes)")
    ax.set_ylabel("TFLOP/s (visible pairs only)")
    ax.set_title("Roofline: each case against the measured ceilings")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "roofline.png"), dpi=120)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+", help="sdpa-prof JSON result files")
    ap.add_argument("--out", default=".", help="folder for the PNG files (default: .)")
    ap.add_argument("--ceilings", help="the output of `sdpa-prof ceilings` (default: the first result's own ceilings)")
    args = ap.parse_args()
    results = [(path, load(path)) for path in args.results]
    os.makedirs(args.out, exist_ok=True)
    plot_tflops(results, args.out)
    written = ["tflops.png"]
    cases = list(profiled_cases(results))
    if cases:
        plot_kernel_time(cases, args.out)
        plot_kernel_counts(cases, args.out)
        written += ["kernel-time.png", "kernels.png"]
    else:
        print("plot.py: no kernel profile in these results; kernel-time.png and kernels.png skipped")
    ceilings = ceilings_from_text(args.ceilings) if args.ceilings else next(
        (data["environment"].get("ceilings") for _, data in results if data["environment"].get("ceilings")), None)
    if plot_roofline(results, ceilings, args.out):
        written.append("roofline.png")
    print("wrote " + ", ".join(os.path.join(args.out, w) for w in written))


if __name__ == "__main__":
    main()
