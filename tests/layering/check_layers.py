#!/usr/bin/env python3
"""The layering of src/ (README, "Design"): each folder includes only the folders below it.

Usage: check_layers.py SRC_DIR. Prints each include that points up or sideways, exits 1 if any.
A quoted include without a folder is a kernels/ header (device code's host-side API)."""
import pathlib
import re
import sys

# What each layer may include besides itself; "kernels" means kernels/ headers.
ALLOWED = {
    "model": {"kernels:dtype.h"},
    "io": {"model"},
    "gpu": {"model", "kernels"},
    "measure": {"model", "io", "gpu", "kernels"},
    "profile": {"model", "gpu"},
    "backends": {"model", "gpu", "kernels"},
    "run": {"model", "gpu", "measure", "profile", "backends", "kernels"},
    "compare": {"model"},
    "report": {"model", "io", "compare"},
    "inject": {"model", "io", "gpu", "profile"},
    "trace": {"model", "io", "gpu", "measure", "profile", "inject"},
    "cli": {"model", "io", "gpu", "measure", "profile", "backends", "run", "compare", "report", "trace"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def violations(src: pathlib.Path):
    for path in sorted(src.rglob("*")):
        if path.suffix not in {".h", ".cpp", ".in"}:
            continue
        layer = path.relative_to(src).parts[0]
        if layer not in ALLOWED:
            yield f"{path}: folder {layer}/ is not in the layering table"
            continue
        for name in INCLUDE.findall(path.read_text()):
            target = name.split("/")[0] if "/" in name else "kernels"
            if target == layer:
                continue
            allowed = ALLOWED[layer]
            if target in allowed or f"kernels:{name}" in allowed:
                continue
            yield f"{path}: {layer}/ includes \"{name}\" ({target}/ is not below {layer}/)"


def main() -> int:
    found = list(violations(pathlib.Path(sys.argv[1])))
    for line in found:
        print(line)
    print(f"layering: {len(found)} include(s) out of place")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
