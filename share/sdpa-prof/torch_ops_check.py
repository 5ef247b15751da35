#!/usr/bin/env python3
"""The CPU ops of PyTorch's attention paths as torch.profiler's key_averages() counts them, in a
process of their own, against the op tables of an sdpa-prof result (`trace --json` of
torch_sdpa.py, or `run --with-torch --json`).

For each torch:<path> case with ops in the result: the same path on the same problem (torch_sdpa's
forward), a warm-up, then --forwards forwards under torch.profiler (CPU activity only). Per op name:
calls per forward (must be equal: exit 1 when one differs or an op is only on one side) and CPU
total and self µs per forward side by side with their ratio. The two CPU times differ by method:
ours are NVTX ranges timed by CUPTI with every launch API call recorded, theirs RecordFunction
events with the profiler's own overhead; neither is the untraced cost (torch_sdpa's host_us is).

    python3 share/sdpa-prof/torch_ops_check.py trace.json [--forwards 10]
"""
import argparse
import collections
import json
import re
import sys

import torch

import torch_sdpa

TOLERANCE = 1e-6  # calls per forward are means of whole counts


def is_second_record(ops, op):
    """The only op inside an op of the same name and input shapes that launches nothing itself: the
    math path's `aten::mul` (q and k times the scale's root), where emit_nvtx has two ranges and
    torch.profiler one event that launches the kernel. A nested op with siblings (`aten::where`
    inside `aten::where` beside `aten::scalar_tensor`) is a call of its own on both sides."""
    if op["parent"] < 0:
        return False
    parent = ops[op["parent"]]
    only_child = sum(1 for o in ops if o["parent"] == op["parent"]) == 1
    launches = parent["kernels"] + parent["memcpys"] + parent["memsets"]
    return (only_child and launches == 0 and parent["name"] == op["name"] and
            parent.get("shapes") == op.get("shapes"))


def ours_by_name(ops):
    """key_averages' view of our call tree: one row per op name, calls and times added up; a
    second record of one call (is_second_record) folded into its parent. -> (rows, folded calls)"""
    rows = collections.OrderedDict()
    folded = 0.0
    for op in ops["ops"]:
        row = rows.setdefault(op["name"], {"calls": 0.0, "total": 0.0, "self": 0.0})
        if is_second_record(ops["ops"], op):
            folded += op["calls_per_forward"]
            row["self"] += op["cpu_self_us"]  # the parent's self time, split between its two ranges
            continue
        row["calls"] += op["calls_per_forward"]
        row["total"] += op["cpu_total_us"]
        row["self"] += op["cpu_self_us"]
    return rows, folded


def is_cuda_api(name):
    """cudaLaunchKernel, cuLaunchKernelEx, cudaDeviceSynchronize...: key_averages lists the CUDA
    runtime and driver calls beside the ops. Ours are no ops but the launches inside an op (its
    kern/copy/set columns); the synchronize is this check's own, after each forward."""
    return re.match(r"cu[A-Z]|cuda[A-Z]", name) is not None


def theirs_by_name(fn, forwards, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(forwards):
            fn()
            torch.cuda.synchronize()
    rows = collections.OrderedDict()
    for e in prof.key_averages():
        if is_cuda_api(e.key):
            continue
        rows[e.key] = {"calls": e.count / forwards, "total": e.cpu_time_total / forwards,
                       "self": e.self_cpu_time_total / forwards}
    return rows


def inputs(problem):
    dtype = torch_sdpa.DTYPES[problem["dtype"]]
    b, h, hkv, d = problem["batch"], problem["heads"], problem["kv_heads"], problem["head_dim"]
    sq, skv = problem["seq_q"], problem["seq_kv"]
    q = torch.randn(b, h, sq, d, device="cuda", dtype=dtype)
    k, v = (torch.randn(b, hkv, skv, d, device="cuda", dtype=dtype) for _ in range(2))
    mask = torch.ones(sq, skv, device="cuda", dtype=torch.bool).triu(1) if problem["causal"] else None
    return q, k, v, mask


def compare(case, forwards, warmup):
    path = case["backend"].split(":", 1)[1]
    problem = case["problem"]
    q, k, v, mask = inputs(problem)
    fn = torch_sdpa.forward_fn(path, q, k, v, mask, problem["causal"], problem.get("scale"))
    with torch.no_grad():
        theirs = theirs_by_name(fn, forwards, warmup)
    ours, folded = ours_by_name(case["profile"]["ops"])
    print(f"== {case['backend']} B{problem['batch']} H{problem['heads']} S{problem['seq_q']} D{problem['head_dim']}")
    print(f"  {'op':<52} {'calls ours':>10} {'torch':>7} {'CPU us ours':>12} {'torch':>9} {'ratio':>6} "
          f"{'self ours':>10} {'torch':>9}")
    differ = []
    for name in list(ours) + [n for n in theirs if n not in ours]:
        a, b = ours.get(name), theirs.get(name)
        calls_a = a["calls"] if a else 0.0
        calls_b = b["calls"] if b else 0.0
        same = abs(calls_a - calls_b) <= TOLERANCE
        if not same:
            differ.append(name)
        ratio = f"{a['total'] / b['total']:.2f}" if a and b and b["total"] > 0 else "-"
        print(f"  {name[:52]:<52} {calls_a:>10g} {calls_b:>7g} {a['total'] if a else 0:>12.1f} "
              f"{b['total'] if b else 0:>9.1f} {ratio:>6} {a['self'] if a else 0:>10.1f} {b['self'] if b else 0:>9.1f}"
              f"{'' if same else '   <- calls differ'}")
    if folded:
        print(f"  {folded:g} calls per forward of ours are a second NVTX range of one call (an op nested in "
              "one of its name and shapes), folded into it")
    print(f"  {len(ours)} ops ours, {len(theirs)} torch.profiler's; " +
          ("calls per forward equal" if not differ else f"calls differ for {', '.join(differ)}"))
    return not differ


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result", help="an sdpa-prof result JSON with torch:* cases and their ops")
    ap.add_argument("--forwards", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    a = ap.parse_args()
    with open(a.result) as f:
        doc = json.load(f)
    cases = [c for c in doc.get("cases", []) if c.get("backend", "").startswith("torch:")
             and (c.get("profile") or {}).get("ops")]
    if not cases:
        print(f"torch_ops_check: {a.result} has no torch:* case with ops (schema 6, torch_sdpa under emit_nvtx)",
              file=sys.stderr)
        return 2
    ok = True
    for case in cases:
        ok = compare(case, a.forwards, a.warmup) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
