#!/usr/bin/env python3
"""The backward pass of sdpa-prof JSON reports side by side: per shape, every backend's and
PyTorch path's backward (and forward+backward), then issue 31's targets read off the same run.

    python3 scripts/backward_table.py backward.json [more.json ...]

Columns: shape, pass, backend, median ms, TFLOP/s (the result's own, 2.5x the forward's FLOPs for
a backward), kernels and memcpys per call, and the status or its reason. Under the table, per
shape: flash's backward against torch:flash's (target: no slower), cudnn's against torch:cudnn's
(target: within 5%), and math's kernels per call against torch:math's (target: equal); where the run
has flash3, issue 34's: flash3's against cudnn's (no slower at D128, within 5% at D64) and against
flash's (at least 1.6x faster). A target whose cases did not both finish is "not measured", with
the reason.
"""
import json
import sys

PASSES = ("bwd", "fwd+bwd")


def shape(p):
    heads = f"H{p['heads']}" + (f"/{p['kv_heads']}" if p["kv_heads"] != p["heads"] else "")
    seq = f"S{p['seq_q']}" + (f"x{p['seq_kv']}" if p["seq_kv"] != p["seq_q"] else "")
    return f"B{p['batch']} {heads} {seq} D{p['head_dim']} {p['dtype']}{' causal' if p['causal'] else ''}"


def number(value, spec):
    width = "".join(ch for ch in spec.split(".")[0] if ch.isdigit())
    return format("-", ">" + width) if value is None else format(value, spec)


def summary(c):
    if c is None:
        return None
    timing, profile = c.get("timing") or {}, c.get("profile") or {}
    return {"ms": timing.get("median_ms") if c["status"] == "ok" else None, "tflops": c.get("tflops"),
            "kernels": profile.get("kernels_per_forward"), "memcpys": profile.get("memcpys_per_forward"),
            "status": c["status"] if c["status"] == "ok" else f"{c['status']}: {c.get('reason', '')[:90]}"}


def target_lines(label, by_backend):
    rules = [(("flash", "torch:flash"), "time"), (("cudnn", "torch:cudnn"), "within5"),
             (("math", "torch:math"), "kernels")]
    if "flash3" in by_backend:
        d128 = next(iter(by_backend.values()))["problem"]["head_dim"] >= 128
        rules += [(("flash3", "cudnn"), "time" if d128 else "within5"), (("flash3", "flash"), "speedup1.6")]
    out = []
    for pair, rule in rules:
        ours, theirs = (summary(by_backend.get(name)) for name in pair)
        head = f"  {pair[0]} against {pair[1]}: "
        missing = [name for name, s in zip(pair, (ours, theirs)) if s is None or s["ms"] is None]
        if missing:
            why = "; ".join(f"{n} {'absent' if s is None else s['status']}" for n, s in
                            zip(pair, (ours, theirs)) if n in missing)
            out.append(head + f"not measured ({why})")
        elif rule == "kernels":
            same = ours["kernels"] == theirs["kernels"]
            out.append(head + f"{number(ours['kernels'], 'g')} kernels per call against "
                       f"{number(theirs['kernels'], 'g')}: {'holds' if same else 'missed'}")
        elif rule == "speedup1.6":
            speedup = theirs["ms"] / ours["ms"]
            out.append(head + f"{ours['ms']:.3f} ms against {theirs['ms']:.3f} ms ({speedup:.2f}x faster, "
                       f"target 1.6x): {'holds' if speedup >= 1.6 else 'missed'}")
        else:
            ratio = ours["ms"] / theirs["ms"]
            bound = 1.0 if rule == "time" else 1.05
            out.append(head + f"{ours['ms']:.3f} ms against {theirs['ms']:.3f} ms ({ratio:.2f}x): "
                       f"{'holds' if ratio <= bound else 'missed'}")
    return [f"{label}:"] + out


def main():
    cases = []
    for path in sys.argv[1:]:
        with open(path) as f:
            cases += json.load(f)["cases"]
    groups = {}
    for c in cases:
        p = c["problem"]
        pass_name = p.get("pass", "fwd")
        if pass_name not in PASSES:
            continue
        groups.setdefault((shape(p), pass_name), {})[c["backend"]] = c
    print(f"{'shape':<30} {'pass':<7} {'backend':<20} {'ms':>9} {'TFLOP/s':>8} {'kern':>5} {'cpy':>4} status")
    for (label, pass_name), by_backend in groups.items():
        for name, c in by_backend.items():
            s = summary(c)
            print(f"{label:<30} {pass_name:<7} {name:<20} {number(s['ms'], '9.3f')} {number(s['tflops'], '8.1f')} "
                  f"{number(s['kernels'], '5g')} {number(s['memcpys'], '4g')} {s['status']}")
    print()
    for (label, pass_name), by_backend in groups.items():
        print("\n".join(target_lines(f"{label} {pass_name}", by_backend)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
