"""CUDA-event timing of a PyTorch forward, shared by the scripts that time PyTorch
(torch_sdpa.py, torch_baseline.py, bench_fused.py) the way sdpa-prof times its own backends."""
import statistics

import torch


def event_times(fn, samples, flush=None):
    """CUDA-event times (ms) of `samples` calls of fn; `flush` (a tensor larger than L2) is
    written before each, as the tool does, so every sample starts with a cold L2."""
    times = []
    for _ in range(samples):
        if flush is not None:
            flush.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return times


def median_ms(fn, warmup, samples, flush=None):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    return statistics.median(event_times(fn, samples, flush))
