#!/usr/bin/env python3
"""Our fused backends against PyTorch's, on the shapes of an sdpa-prof JSON report.

    sdpa-prof --backend flash,efficient --seq 1024,4096,16384 --head-dim 64,128 \
              --causal --json fused.json
    python3 scripts/gpu/bench_fused.py fused.json

For every problem in the report that a `flash` or `efficient` case ran on, times PyTorch's
scaled_dot_product_attention with the FLASH_ATTENTION and EFFICIENT_ATTENTION backends in this
process (L2 flushed before each sample, CUDA-event median) and prints one table: our median and
TFLOP/s beside PyTorch's, and the ratio (PyTorch time / our time: above 1 means ours is faster).
FLOPs follow the report's convention: 4 * B * Hq * D * unmasked (query, key) pairs.
Needs PyTorch with CUDA (the GPU machine).
"""
import argparse
import json
import pathlib
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "share" / "sdpa-prof"))
from cuda_timing import median_ms  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
TORCH_BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION}


def problem_key(p):
    return (p["batch"], p["heads"], p["kv_heads"], p["seq_q"], p["seq_kv"], p["head_dim"],
            p["dtype"], p["causal"])


def label(p):
    s = f"B{p['batch']} H{p['heads']}"
    if p["kv_heads"] != p["heads"]:
        s += f" Hkv{p['kv_heads']}"
    s += f" S{p['seq_q']}"
    if p["seq_kv"] != p["seq_q"]:
        s += f" Skv{p['seq_kv']}"
    return s + f" D{p['head_dim']} {p['dtype']}{' causal' if p['causal'] else ''}"


def torch_time(p, backend, warmup, samples, flush):
    dt = DTYPES[p["dtype"]]
    q = torch.randn(p["batch"], p["heads"], p["seq_q"], p["head_dim"], device="cuda", dtype=dt)
    k = torch.randn(p["batch"], p["kv_heads"], p["seq_kv"], p["head_dim"], device="cuda", dtype=dt)
    v = torch.randn_like(k)
    gqa = p["kv_heads"] != p["heads"]

    def run():
        with sdpa_kernel(TORCH_BACKENDS[backend]):
            F.scaled_dot_product_attention(q, k, v, is_causal=p["causal"], scale=p["scale"],
                                           enable_gqa=gqa)
    try:
        return median_ms(run, warmup, samples, flush)
    except RuntimeError as err:  # PyTorch refuses the shape for that backend
        return f"skipped ({str(err).splitlines()[0][:40]})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("report", help="sdpa-prof JSON report")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--samples", type=int, default=20)
    args = ap.parse_args()

    with open(args.report) as f:
        cases = json.load(f)["cases"]
    ours = {}
    problems = {}
    for c in cases:
        if c["backend"] in TORCH_BACKENDS and c["status"] == "ok":
            key = problem_key(c["problem"])
            problems[key] = c["problem"]
            ours[(c["backend"], key)] = c["timing"]["median_ms"]

    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    rows = []
    for key, p in problems.items():
        for backend in TORCH_BACKENDS:
            if (backend, key) not in ours:
                continue
            mine = ours[(backend, key)]
            theirs = torch_time(p, backend, args.warmup, args.samples, flush)
            tf = p["flops"] / 1e9
            if isinstance(theirs, str):
                rows.append((label(p), backend, mine, tf / mine, theirs, "", ""))
            else:
                rows.append((label(p), backend, mine, tf / mine, f"{theirs:.3f}", f"{tf / theirs:.1f}",
                             f"{theirs / mine:.2f}x"))

    print(f"{'shape':<34} {'backend':<10} {'ours ms':>9} {'TFLOP/s':>8} {'torch ms':>9} {'TFLOP/s':>8} {'ratio':>7}")
    for r in rows:
        print(f"{r[0]:<34} {r[1]:<10} {r[2]:9.3f} {r[3]:8.1f} {r[4]:>9} {r[5]:>8} {r[6]:>7}")


if __name__ == "__main__":
    main()
