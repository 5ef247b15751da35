#!/usr/bin/env bash
# `cmake --install` of the build in BUILD_DIR into a fresh prefix: the binary runs from there, its
# injection library is beside it, and share/sdpa-prof holds torch_sdpa.py with every module it
# imports (all the way down, but the standard library and torch): what --with-torch needs.
#   install_check.sh BUILD_DIR
set -uo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1 || { cat "$prefix.log"; rm -f "$prefix.log"; fail "cmake --install"; }
rm -f "$prefix.log"
"$prefix/bin/sdpa-prof" --version || fail "the installed sdpa-prof does not run"
[ -f "$prefix/bin/libsdpa-prof-inject.so" ] || fail "no injection library beside the installed binary"
python3 - "$prefix/share/sdpa-prof" <<'PY' || fail "share/sdpa-prof is not self-contained"
import ast, pathlib, sys
share = pathlib.Path(sys.argv[1])
todo, seen = ["torch_sdpa"], set()
while todo:
    name = todo.pop()
    if name in seen:
        continue
    seen.add(name)
    path = share / f"{name}.py"
    if not path.is_file():
        sys.exit(f"{path.name} is imported but not installed in {share}")
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        for module in (n.split(".")[0] for n in names):
            if module not in sys.stdlib_module_names and module != "torch":
                todo.append(module)
print("installed:", ", ".join(sorted(f"{n}.py" for n in seen)))
PY
echo "install_check: ok ($prefix)"
