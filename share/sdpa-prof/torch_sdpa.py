#!/usr/bin/env python3
"""PyTorch's own attention paths, each forward in an NVTX range that `sdpa-prof trace` reads.

Runs PyTorch's naive attention (out-of-place and in-place masked fill) and
scaled_dot_product_attention with each backend (math, efficient, flash, cudnn) on the shape given
with sdpa-prof's own flags: the forward under torch.no_grad() (--pass fwd), autograd's backward of
a saved forward (--pass bwd), or both as a training step (--pass fwd+bwd), with a fixed dO. Each
backend: a warm-up, a few calls each in the range sdpa-prof/torch:<backend>/<problem>/fwd<i> (the
grammar of the README, "trace"), then timed samples like `sdpa-prof run` times them (L2 flushed
before each sample, CUDA events, median), then the host time of a call (launches only,
synchronized apart). The profiled calls alone run under
torch.autograd.profiler.emit_nvtx(record_shapes=True), which names each aten op in an NVTX range
(`sdpa-prof trace --ops`); the timed and host samples never do. With --launch graph each path's
call is captured in a torch.cuda.CUDAGraph after a warm-up on a side stream, and every call after
that (the profiled, timed and host ones) is one replay; a path that cannot be captured is skipped
with the error. Under `sdpa-prof trace` (SDPA_PROF_RESULTS set) the times, the skips with
PyTorch's reasons and the torch and cuDNN versions go to the file it names; alone, a table.

    sdpa-prof trace --kernels -- python3 share/sdpa-prof/torch_sdpa.py --seq 1024
"""
import argparse
import json
import os
import statistics
import sys
import time
import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import range_label
from cuda_timing import event_times
from torch_baseline import naive

SDPA_BACKENDS = {
    "math": SDPBackend.MATH,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
    "flash": SDPBackend.FLASH_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
}
BACKENDS = ["naive", "naive-inplace", *SDPA_BACKENDS]
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def problem_label(a):
    """The problem part of a case range: B8_H16_S1024_D64_bf16_causal (range_label.py)."""
    return range_label.problem_label(a.batch, a.heads, a.kv_heads, a.seq, a.seq_kv, a.head_dim, a.dtype, a.causal,
                                     a.scale, a.pass_name, a.launch)


def forward_fn(backend, q, k, v, mask, causal, scale):
    gqa = q.shape[1] != k.shape[1]
    if backend in ("naive", "naive-inplace"):
        if gqa:  # the naive path has no grouped heads: K and V repeated to every query head
            k, v = (t.repeat_interleave(q.shape[1] // t.shape[1], dim=1) for t in (k, v))
        return lambda: naive(q, k, v, mask, inplace=backend == "naive-inplace", scale=scale)

    def run():
        with sdpa_kernel(SDPA_BACKENDS[backend]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa, scale=scale)
    return run


def pass_fn(pass_name, forward, inputs, d_out):
    """What a call of the pass runs: the forward, the backward of one saved forward, or both."""
    if pass_name == "fwd":
        return forward

    def clear_grads():  # a .grad left from the last call would add an accumulation kernel
        for t in inputs:
            t.grad = None

    if pass_name == "bwd":
        saved = []

        def backward():
            if not saved:  # the first call (first_call's, outside every range) runs the forward it keeps
                saved.append(forward())
            clear_grads()
            saved[0].backward(d_out, retain_graph=True)
        return backward

    def forward_backward():
        clear_grads()
        forward().backward(d_out)
    return forward_backward


def first_call(fn):
    """(PyTorch's own reason when it refuses the backend for this problem, or None; the host µs of
    that first call, launches only)."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            start = time.perf_counter()
            fn()
            host_us = (time.perf_counter() - start) * 1e6
            torch.cuda.synchronize()
            return None, host_us
        except RuntimeError as e:
            said = [str(w.message) for w in seen] + [str(e).strip()]
            return " ".join(" ".join(s.split()) for s in said if s), None


def host_times_us(fn, count):
    """Host µs of each of `count` calls: the launches only, the GPU drained between calls."""
    times = []
    for _ in range(count):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e6)
    torch.cuda.synchronize()
    return times


def last_line(e):
    """An exception's type and the last line it says: a traceback's error."""
    return f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[-1]}".rstrip(": ")


def captured(fn, warmup):
    """(a replay of fn captured in a CUDA graph, None), or (None, why it cannot be captured). The
    warm-up runs on a side stream, as PyTorch's CUDA-graph guide prescribes, so that lazy
    one-time work (library handles, autotuning, the allocator's first blocks) stays out of the
    graph. Thread-local capture mode, as sdpa-prof's own: a call this thread makes that capture
    forbids (a synchronization, a plain cudaMalloc) fails the capture; other threads are left alone."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(max(warmup, 1)):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph, capture_error_mode="thread_local"):
            fn()
    except Exception as e:  # RuntimeError from CUDA or the path itself
        torch.cuda.synchronize()
        return None, f"cannot be captured into a CUDA graph: {last_line(e)}"
    return graph.replay, None


def run_backend(name, fn, a, flush):
    prefix = f"sdpa-prof/torch:{name}/{problem_label(a)}"
    reason, first_us = first_call(fn)
    if reason is not None:
        return {"range": prefix, "status": "skipped", "reason": reason}
    if a.launch == "graph":
        fn, reason = captured(fn, a.warmup)
        if reason is not None:
            return {"range": prefix, "status": "skipped", "reason": reason}
        start = time.perf_counter()  # the first replay is the graph case's first call
        fn()
        first_us = (time.perf_counter() - start) * 1e6
        torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(f"torch_sdpa warm-up torch:{name}")
    for _ in range(a.warmup):
        fn()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    with torch.autograd.profiler.emit_nvtx(record_shapes=True):  # the profiled forwards only
        for i in range(a.forwards):
            torch.cuda.nvtx.range_push(f"{prefix}/fwd{i}")
            fn()
            torch.cuda.nvtx.range_pop()
            torch.cuda.synchronize()  # forwards apart, as sdpa-prof's profile pass keeps them
    torch.cuda.nvtx.range_push(f"torch_sdpa timing torch:{name}")
    times = event_times(fn, a.samples, flush)
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push(f"torch_sdpa host torch:{name}")
    host_us = host_times_us(fn, a.samples)
    torch.cuda.nvtx.range_pop()
    return {"range": prefix, "status": "ok", "warmup": a.warmup, "cold_cache": True, "samples_ms": times,
            "host_first_call_us": first_us, "host_us": host_us}


def scale_arg(text):
    try:
        return float(range_label.scale_text(text))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def positive(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="all", help=f"comma-separated, or all: {','.join(BACKENDS)}")
    ap.add_argument("--batch", type=positive, default=8)
    ap.add_argument("--heads", type=positive, default=16)
    ap.add_argument("--kv-heads", type=positive, help="key/value heads (default: --heads)")
    ap.add_argument("--seq", type=positive, default=1024)
    ap.add_argument("--seq-kv", type=positive, help="key/value length (default: --seq)")
    ap.add_argument("--head-dim", type=positive, default=64)
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    ap.add_argument("--causal", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--scale", type=scale_arg, help="softmax scale (default: 1/sqrt(head dim))")
    ap.add_argument("--pass", dest="pass_name", choices=range_label.PASSES, default="fwd",
                    help="fwd, bwd (autograd's backward of a saved forward) or fwd+bwd")
    ap.add_argument("--launch", choices=range_label.LAUNCHES, default="eager",
                    help="eager, or graph (each path captured in a torch.cuda.CUDAGraph, its replays run)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--forwards", type=positive, default=3, help="forwards in case ranges (the profile)")
    ap.add_argument("--samples", type=positive, default=30, help="timed forwards")
    a = ap.parse_args()
    a.kv_heads = a.kv_heads or a.heads
    a.seq_kv = a.seq_kv or a.seq
    if a.heads % a.kv_heads != 0:
        ap.error(f"--kv-heads {a.kv_heads} must divide --heads {a.heads}")
    names = BACKENDS if a.backend == "all" else a.backend.split(",")
    unknown = [n for n in names if n not in BACKENDS]
    if unknown:
        ap.error(f"unknown backend {unknown[0]!r}; the backends are {', '.join(BACKENDS)}")
    a.backends = names
    return a


def main():
    a = parse_args()
    if not torch.cuda.is_available():
        print("torch_sdpa.py: PyTorch sees no CUDA device", file=sys.stderr)
        return 3
    dtype = DTYPES[a.dtype]
    grads = a.pass_name != "fwd"
    q = torch.randn(a.batch, a.heads, a.seq, a.head_dim, device="cuda", dtype=dtype, requires_grad=grads)
    k, v = (torch.randn(a.batch, a.kv_heads, a.seq_kv, a.head_dim, device="cuda", dtype=dtype, requires_grad=grads)
            for _ in range(2))
    d_out = torch.randn_like(q, requires_grad=False) if grads else None
    mask = torch.ones(a.seq, a.seq_kv, device="cuda", dtype=torch.bool).triu(1) if a.causal else None
    # Twice the L2, written before each sample, as sdpa-prof's own flush does.
    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4, device="cuda", dtype=torch.int32)
    source = f"pytorch {torch.__version__}"
    cases = []
    with torch.set_grad_enabled(grads):
        for name in a.backends:
            try:
                if name == "cudnn":  # asked only here: a broken cuDNN fails torch:cudnn alone
                    source += f", cuDNN {torch.backends.cudnn.version()}"
                forward = forward_fn(name, q, k, v, mask, a.causal, a.scale)
                cases.append(run_backend(name, pass_fn(a.pass_name, forward, (q, k, v), d_out), a, flush))
            except Exception as e:  # the path failed: its row says why, the others still run
                cases.append({"range": f"sdpa-prof/torch:{name}/{problem_label(a)}", "status": "failed",
                              "reason": last_line(e)})
            torch.cuda.empty_cache()
    print(f"# {source}, {torch.cuda.get_device_name()}")
    for c in cases:
        backend = c["range"].split("/")[1]
        if c["status"] == "ok":
            print(f"{backend:<20} {problem_label(a):<32} {statistics.median(c['samples_ms']):>9.3f} ms")
        else:
            print(f"{backend:<20} {problem_label(a):<32} {c['status']}: {c['reason']}")
    results = os.environ.get("SDPA_PROF_RESULTS")
    if results:
        with open(results, "w") as f:
            json.dump({"schema": "sdpa-prof/program-results", "schema_version": 2, "source": source, "cases": cases}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
