#!/usr/bin/env python3
"""Several builds side by side over alternating runs: each case's mean median per build, its
change against the first build, and each build's geometric mean change.

    python3 scripts/variants_table.py --variant main m1.json m2.json --variant X x1.json x2.json \\
        [--against cudnn]

Cases are keyed as scripts/ab_table.py keys them (every swept field that differs from the plain
case), so decode shapes stay apart. --against BACKEND also sets each build's time of a case
against BACKEND's time on the same shape (from any build's runs) and counts the shapes where the
build is at or under it. Cases not `ok` in some run are left out and named.
"""
import argparse
import math
import statistics

from ab_table import key, load


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", nargs="+", action="append", required=True, metavar=("NAME", "JSON"),
                        help="a build's name, then its JSON reports")
    parser.add_argument("--against", metavar="BACKEND", help="a backend to hold every build's cases against")
    args = parser.parse_args()
    if any(len(v) < 2 for v in args.variant):
        parser.error("--variant takes a name and at least one JSON report")
    names = [v[0] for v in args.variant]
    if len(set(names)) != len(names):
        parser.error("each --variant needs a name of its own")
    runs, skipped = {}, {}
    for name, *paths in args.variant:
        runs[name], skipped[name] = load(paths)
    means = {name: {k: statistics.mean(s[0] for s in samples) for k, samples in runs[name].items()}
             for name in names}
    reference = {}
    if args.against:
        for name in names:
            for (shape, backend), ms in means[name].items():
                if backend == args.against:
                    reference.setdefault(shape, []).append(ms)
        reference = {shape: statistics.mean(values) for shape, values in reference.items()}
    cases = sorted({k for name in names for k in means[name] if k[1] != args.against})
    first = names[0]
    header = f"{'case':<36} {'backend':<20}" + "".join(f" {n:>9}" for n in names)
    header += "".join(f" {n + '/' + first:>12}" for n in names[1:])
    if args.against:
        header += "".join(f" {n + '/' + args.against:>14}" for n in names)
    print(header)
    changes = {n: [] for n in names[1:]}
    against = {n: [] for n in names}
    for k in cases:
        line = f"{k[0]:<36} {k[1]:<20}"
        line += "".join(f" {means[n][k]:9.4f}" if k in means[n] else f" {'-':>9}" for n in names)
        for n in names[1:]:
            if k in means[n] and k in means[first]:
                change = means[n][k] / means[first][k]
                changes[n].append(change)
                line += f" {change:12.3f}"
            else:
                line += f" {'-':>12}"
        if args.against:
            for n in names:
                if k in means[n] and k[0] in reference:
                    ratio = means[n][k] / reference[k[0]]
                    against[n].append(ratio)
                    line += f" {ratio:14.3f}"
                else:
                    line += f" {'-':>14}"
        print(line)
    for n in names[1:]:
        g = geometric_mean(changes[n])
        if g is not None:
            print(f"{n} against {first}: geometric mean {g:.4f} over {len(changes[n])} cases")
    if args.against:
        for n in names:
            if against[n]:
                held = sum(r <= 1 for r in against[n])
                print(f"{n} at or under {args.against}: {held} of {len(against[n])} cases "
                      f"(geometric mean {geometric_mean(against[n]):.4f}, worst {max(against[n]):.3f})")
    for n in names:
        for k in sorted(skipped[n]):
            print(f"not ok in some run of {n}: {k[0]} {k[1]}")


if __name__ == "__main__":
    main()
