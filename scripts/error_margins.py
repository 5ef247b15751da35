#!/usr/bin/env python3
"""The worst verification error per backend and dtype in sdpa-prof result files, with its margin
under the bound (bound / error): the table docs/verification-notes.md keeps."""
import argparse
import json


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("results", nargs="+", help="sdpa-prof --json files")
    args = parser.parse_args()
    worst = {}
    failed = []
    for path in args.results:
        with open(path) as f:
            for case in json.load(f)["cases"]:
                v = case.get("verification")
                if not v:
                    continue
                p = case["problem"]
                shape = f"B{p['batch']} H{p['heads']}/{p['kv_heads']} S{p['seq_q']}x{p['seq_kv']} D{p['head_dim']}"
                if not v["passed"]:
                    failed.append(f"{case['backend']} {p['dtype']} {shape}")
                key = (case["backend"], p["dtype"])
                row = worst.setdefault(key, {"cases": 0, "rel": (0.0, 1.0, ""), "abs": (0.0, 1.0, "")})
                row["cases"] += 1
                for name, err, tol in (("rel", v["rel_l2_error"], v["rel_l2_tolerance"]),
                                       ("abs", v["max_abs_error"], v["max_abs_tolerance"])):
                    if err / tol > row[name][0] / row[name][1]:
                        row[name] = (err, tol, shape)
    print("| backend | dtype | cases | worst rel L2 | margin | at | worst max abs | margin | at |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (backend, dtype), row in sorted(worst.items()):
        cells = []
        for name in ("rel", "abs"):
            err, tol, shape = row[name]
            margin = f"{tol / err:.1f}x" if err > 0 else "exact"
            cells += [f"{err:.2g}", margin, shape]
        print(f"| {backend} | {dtype} | {row['cases']} | " + " | ".join(cells) + " |")
    for case in failed:
        print(f"FAILED verification: {case}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
