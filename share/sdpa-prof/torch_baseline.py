#!/usr/bin/env python3
"""PyTorch's own attention paths on the same shapes as sdpa-prof, timed the same way.

Prints one line per (path, shape): median ms over CUDA-event samples after a warm-up, and
kernels per forward counted with torch.profiler; with --kernel-names, each kernel of a forward
as torch.profiler's trace records it (launches, registers, est. achieved occupancy, name), to set
beside `sdpa-prof --kernels`. Needs PyTorch with CUDA (the GPU machine).
"""
import argparse
import collections
import json
import math
import os
import tempfile

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from cuda_timing import median_ms


def naive(q, k, v, mask, inplace, scale=None):
    scores = (q @ k.transpose(-2, -1)) * (scale if scale is not None else 1.0 / math.sqrt(q.shape[-1]))
    if mask is not None:
        scores = scores.masked_fill_(mask, float("-inf")) if inplace else scores.masked_fill(mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def sdpa(backend):
    def run(q, k, v, mask, causal):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return run


def profile_forward(fn):
    """Kernels and memcpys of one forward, and each kernel's trace record."""
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    memcpys = [e for e in kernels if "Memcpy" in e.name or "memcpy" in e.name]
    with tempfile.TemporaryDirectory() as tmp:
        trace_path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(trace_path)
        with open(trace_path) as f:
            trace = json.load(f)
    records = [e for e in trace.get("traceEvents", []) if e.get("cat") == "kernel"]
    return len(kernels) - len(memcpys), len(memcpys), records


def print_kernel_records(records):
    launches = collections.Counter()
    first = {}
    for r in records:
        launches[r["name"]] += 1
        first.setdefault(r["name"], r.get("args", {}))
    for name, count in launches.items():
        args = first[name]
        occupancy = args.get("est. achieved occupancy %", "-")
        print(f"    {count}x regs {args.get('registers per thread', '-'):>3} smem {args.get('shared memory', '-'):>6} "
              f"grid {args.get('grid', '-')} block {args.get('block', '-')} occ {occupancy}%  {name[:110]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--seq", default="1024,4096")
    ap.add_argument("--paths", default="naive,naive-inplace,math")
    ap.add_argument("--no-causal", action="store_true")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--kernel-names", action="store_true", help="list each forward's kernels")
    args = ap.parse_args()
    causal = not args.no_causal
    paths = {
        "naive": lambda q, k, v, m, c: naive(q, k, v, m, inplace=False),
        "naive-inplace": lambda q, k, v, m, c: naive(q, k, v, m, inplace=True),
        "math": sdpa(SDPBackend.MATH),
        "efficient": sdpa(SDPBackend.EFFICIENT_ATTENTION),
        "flash": sdpa(SDPBackend.FLASH_ATTENTION),
        "cudnn": sdpa(SDPBackend.CUDNN_ATTENTION),
    }
    print(f"# torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}")
    print(f"{'path':<14} {'shape':<22} {'median ms':>10} {'TFLOP/s':>8} {'kernels':>8} {'memcpy':>7}")
    for s in [int(x) for x in args.seq.split(",")]:
        shape = (args.batch, args.heads, s, args.head_dim)
        q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        mask = torch.ones(s, s, device="cuda", dtype=torch.bool).triu(1) if causal else None
        pairs = s * (s + 1) / 2 if causal else s * s
        flops = 4 * args.batch * args.heads * args.head_dim * pairs
        for name in args.paths.split(","):
            fn = lambda: paths[name](q, k, v, mask, causal)
            try:
                ms = median_ms(fn, args.warmup, args.samples)
                kernels, copies, records = profile_forward(fn)
            except RuntimeError as e:
                print(f"{name:<14} B{args.batch} H{args.heads} S{s} D{args.head_dim}  skipped: {str(e)[:80]}")
                continue
            label = f"B{args.batch} H{args.heads} S{s} D{args.head_dim}"
            print(f"{name:<14} {label:<22} {ms:>10.3f} {flops / ms / 1e9:>8.1f} {kernels:>8} {copies:>7}")
            if args.kernel_names:
                print_kernel_records(records)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
