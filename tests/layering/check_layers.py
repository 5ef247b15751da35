#!/usr/bin/env python3
"""The layering of src/ (README, "Design"): each folder includes only the folders below it, and
defines the functions its own headers declare.

Usage: check_layers.py SRC_DIR. Prints each include that points up or sideways, and each function
declared in a folder's header but defined in a folder that one may not include (a dependency no
include shows), exits 1 if any. A quoted include without a folder is a kernels/ header (device
code's host-side API)."""
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
# A free function at namespace scope (not indented, as the sources are formatted): its name and
# parameters, then its declaration's ';' or its definition's '{'. A qualified name (a member) is
# neither.
_FREE_FUNCTION = (r'^(?![ \t#}])(?!(?:struct|class|enum|namespace|using|typedef|return)\b)'
                  r'[^;{}()=\n]*?(?<!::)\b([A-Za-z_]\w*)\s*\(([^;{}]*)\)[^;{}()=]*')
DECLARATION = re.compile(_FREE_FUNCTION + ";", re.M)
DEFINITION = re.compile(_FREE_FUNCTION + r"\{", re.M)
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def parameter_types(parameters: str) -> tuple:
    """The parameters' types, without names, default values or spacing: how an overload differs."""
    types, depth, current = [], 0, ""
    for ch in parameters + ",":
        depth += ch in "<(" and 1 or ch in ">)" and -1 or 0
        if ch == "," and depth == 0:
            text = current.split("=")[0].strip()
            words = re.findall(r"[A-Za-z_]\w*|\S", text)
            if len(words) > 1 and re.fullmatch(r"[A-Za-z_]\w*", words[-1]) and words[-2] not in {"::", "<", ","}:
                words = words[:-1]  # the parameter's name
            types.append("".join(words))
            current = ""
        else:
            current += ch
    return tuple(t for t in types if t)


def functions(pattern, path: pathlib.Path):
    for name, parameters in pattern.findall(COMMENT.sub("", path.read_text())):
        yield name, parameter_types(parameters)


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


def upward_definitions(src: pathlib.Path):
    declared = {}  # (name, parameter types) -> (folder, header) of each declaration
    for path in sorted(src.rglob("*.h")):
        layer = path.relative_to(src).parts[0]
        for function in functions(DECLARATION, path):
            declared.setdefault(function, []).append((layer, path))
    for path in sorted(src.rglob("*.cpp")):
        layer = path.relative_to(src).parts[0]
        if layer not in ALLOWED:
            continue
        for function in functions(DEFINITION, path):
            name = function[0]
            for header_layer, header in declared.get(function, []):
                if header_layer == layer or header_layer not in ALLOWED or layer in ALLOWED[header_layer]:
                    continue
                yield (f"{path}: defines {name}(), which {header} declares "
                       f"({layer}/ is not below {header_layer}/)")


def main() -> int:
    src = pathlib.Path(sys.argv[1])
    found = list(violations(src)) + list(upward_definitions(src))
    for line in found:
        print(line)
    print(f"layering: {len(found)} include(s) or definition(s) out of place")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
