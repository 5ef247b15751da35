#!/usr/bin/env python3
"""Where a kernel's instructions and stalls go, from Nsight Compute's per-instruction (SASS) page:

  ncu --section SourceCounters --section WarpStateStats -k regex:NAME -c 1 -o rep PROGRAM ...
  ncu -i rep.ncu-rep --page source --csv --print-source sass > NAME.csv

Default: the executed instructions by opcode (millions) and each opcode's share of the warp-stall
samples, one column pair per file, so that two kernels of one algorithm (ours against FA2's) can
be set side by side. --lines: the same by instruction, registers and constants folded, so that
e.g. the accumulator zeroing (CS2R R, SRZ) or a swizzle's XOR (LOP3) shows as one line.
--stalls: per stall reason, the instructions of the first file that hold most of its samples.
"""
import argparse
import collections
import csv
import re
import sys


def read_rows(path):
    lines = open(path, encoding="utf-8").read().splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith('"Address"'))
    except StopIteration:
        sys.exit(f"{path}: no per-instruction table (want ncu --page source --csv --print-source sass)")
    rows = list(csv.DictReader(lines[start:]))
    for column in ("Source", "Instructions Executed", "Warp Stall Sampling (All Samples)"):
        if rows and column not in rows[0]:
            sys.exit(f"{path}: no column {column!r} (profile with --section SourceCounters)")
    return rows


def count(row, column):
    value = row.get(column) or "0"
    try:
        return int(value.replace(",", ""))
    except ValueError:
        return 0


def instruction(source):
    text = re.sub(r"^@!?U?P\w+\s+", "@P ", source.strip())
    text = re.sub(r"\bU?R\d+\b", "R", text)
    return re.sub(r"0x[0-9a-f]+", "imm", text)


def opcode(source):
    text = re.sub(r"^@!?U?P\w+\s+", "", source.strip())
    return text.split()[0].split(".")[0] if text else "?"


def mix(paths, key, top):
    tables = []
    for path in paths:
        executed, samples = collections.Counter(), collections.Counter()
        for row in read_rows(path):
            k = key(row["Source"])
            executed[k] += count(row, "Instructions Executed")
            samples[k] += count(row, "Warp Stall Sampling (All Samples)")
        tables.append((executed, samples, max(sum(samples.values()), 1)))
    keys = sorted({k for t in tables for k in t[0]}, key=lambda k: -max(t[0][k] for t in tables))
    width = max([len(k) for k in keys[:top]] + [8])
    names = [p.rsplit("/", 1)[-1].removesuffix(".csv") for p in paths]
    print(f"{'':<{width}}" + "".join(f"{n[:20]:>22}{'stall %':>9}" for n in names))
    for k in keys[:top]:
        print(f"{k:<{width}}" + "".join(f"{e[k] / 1e6:>21.1f}M{100 * s[k] / total:>9.1f}" for e, s, total in tables))
    print(f"{'total':<{width}}" + "".join(f"{sum(e.values()) / 1e6:>21.1f}M{'':>9}" for e, _, _ in tables))


def stalls(path, top):
    rows = read_rows(path)
    reasons = [c for c in rows[0] if c.startswith("stall_") and "Not Issued" not in c] if rows else []
    total = max(sum(count(r, "Warp Stall Sampling (All Samples)") for r in rows), 1)
    by_reason = sorted(reasons, key=lambda c: -sum(count(r, c) for r in rows))
    for reason in by_reason:
        share = 100 * sum(count(r, reason) for r in rows) / total
        if share < 1:
            break
        print(f"== {reason[6:]}: {share:.1f}% of samples")
        ranked = sorted(range(len(rows)), key=lambda i: -count(rows[i], reason))[:top]
        for i in sorted(ranked):
            r = rows[i]
            print(f"  #{i:<5} {100 * count(r, reason) / total:5.2f}%  executed {count(r, 'Instructions Executed') / 1e3:>8.0f}K"
                  f"  {r['Source'].strip()[:90]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="+", help="ncu --page source --csv --print-source sass output")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--lines", action="store_true", help="by instruction instead of by opcode")
    mode.add_argument("--stalls", action="store_true", help="each stall reason's instructions (first file)")
    ap.add_argument("--top", type=int, default=30, help="rows to print (default 30)")
    args = ap.parse_args()
    if args.stalls:
        stalls(args.csv[0], max(args.top // 4, 3))
    else:
        mix(args.csv, instruction if args.lines else opcode, args.top)


if __name__ == "__main__":
    main()
