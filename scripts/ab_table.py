#!/usr/bin/env python3
"""Two builds side by side over alternating runs: the mean of each case's medians per build.

    python3 scripts/ab_table.py --a base1.json base2.json ... --b new1.json new2.json ...

One line per case (backend, shape, mask) present in both: the mean median ms of A and of B with
their range, the change, and the same at the peak clock (clock_normalized_ms). Cases that are
not `ok` in some run are left out and named.
"""
import argparse
import json
import statistics


def key(case):
    """The case's identity: every problem field a preset sweeps, written only where it is not
    the plain prefill case's (Hkv = H, Skv = Sq, contiguous, forward, bf16, eager), so decode
    shapes of one B, H, Sq and D stay apart."""
    p = case["problem"]
    heads = f"H{p['heads']}" + (f"/{p['kv_heads']}" if p.get("kv_heads", p["heads"]) != p["heads"] else "")
    seq = f"S{p['seq_q']}" + (f"/{p['seq_kv']}" if p.get("seq_kv", p["seq_q"]) != p["seq_q"] else "")
    shape = f"B{p['batch']} {heads} {seq} D{p['head_dim']}"
    if p.get("page_size"):
        shape += f" page{p['page_size']}"
    shape += " causal" if p["causal"] else " full"
    for field, plain in (("pass", "fwd"), ("dtype", "bf16"), ("launch", "eager")):
        if p.get(field, plain) != plain:
            shape += f" {p[field]}"
    return (shape, case["backend"])


def load(paths):
    runs = {}
    skipped = set()
    for path in paths:
        with open(path) as f:
            for case in json.load(f)["cases"]:
                t = case.get("timing") or {}
                if case["status"] != "ok" or t.get("median_ms") is None:
                    skipped.add(key(case))
                    continue
                runs.setdefault(key(case), []).append(
                    (t["median_ms"], t.get("clock_normalized_ms")))
    return runs, skipped


def summary(samples, index):
    values = [s[index] for s in samples if s[index] is not None]
    return (statistics.mean(values), min(values), max(values)) if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", nargs="+", required=True, help="JSON reports of build A")
    parser.add_argument("--b", nargs="+", required=True, help="JSON reports of build B")
    args = parser.parse_args()
    a, skipped_a = load(args.a)
    b, skipped_b = load(args.b)
    print(f"{'case':<36} {'backend':<28} {'A ms (range)':>22} {'B ms (range)':>22} "
          f"{'change':>7} {'A@peak':>7} {'B@peak':>7} {'change':>7}")
    for k in sorted(set(a) & set(b)):
        ta, tb = summary(a[k], 0), summary(b[k], 0)
        pa, pb = summary(a[k], 1), summary(b[k], 1)
        peak = (f"{pa[0]:7.3f} {pb[0]:7.3f} {100 * (pb[0] / pa[0] - 1):+6.1f}%"
                if pa and pb else f"{'-':>7} {'-':>7} {'-':>7}")
        print(f"{k[0]:<36} {k[1]:<28} {ta[0]:7.3f} ({ta[1]:.3f}-{ta[2]:.3f}) "
              f"{tb[0]:7.3f} ({tb[1]:.3f}-{tb[2]:.3f}) {100 * (tb[0] / ta[0] - 1):+6.1f}% {peak}")
    for name, skipped in (("A", skipped_a), ("B", skipped_b)):
        for k in sorted(skipped):
            print(f"not ok in some run of {name}: {k[0]} {k[1]}")


if __name__ == "__main__":
    main()
