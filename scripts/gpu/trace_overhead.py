#!/usr/bin/env python3
"""What tracing costs a kernel launch: host time per launch of a tiny kernel, a loop of N.

Run it alone and under `sdpa-prof trace --`; the difference of the two "us per launch" lines
is the injection's cost (CUPTI's kernel, API and memcpy records, our buffers written out).
"""
import argparse
import time

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--launches", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    x = torch.zeros(256, device="cuda")
    for _ in range(100):  # warm-up: the kernel loaded, the caching allocator filled
        x.add_(1)
    torch.cuda.synchronize()
    per_launch = []
    for _ in range(a.repeats):
        start = time.perf_counter()
        for _ in range(a.launches):
            x.add_(1)
        torch.cuda.synchronize()
        per_launch.append((time.perf_counter() - start) / a.launches * 1e6)
    per_launch.sort()
    print(f"us per launch: median {per_launch[len(per_launch) // 2]:.2f} (min {per_launch[0]:.2f}, "
          f"max {per_launch[-1]:.2f}) over {a.repeats} loops of {a.launches}")


if __name__ == "__main__":
    main()
