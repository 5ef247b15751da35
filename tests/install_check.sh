#!/usr/bin/env bash
# `cmake --install` of the build in BUILD_DIR into a fresh prefix: the binary runs from there
# (--version, list, a dry run of an installed preset, report), `list` names the installed
# injection library (lib/sdpa-prof) and torch script, and share/sdpa-prof holds torch_sdpa.py with
# every module it imports (all the way down, but the standard library and torch).
#   install_check.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$1
source=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1 || { cat "$prefix.log"; rm -f "$prefix.log"; fail "cmake --install"; }
rm -f "$prefix.log"
tool=$prefix/bin/sdpa-prof
"$tool" --version || fail "the installed sdpa-prof does not run"
[ -f "$prefix/lib/sdpa-prof/libsdpa-prof-inject.so" ] || fail "no injection library in lib/sdpa-prof"
# Run from elsewhere, so that nothing is found through the source or build tree.
cd "$prefix"
listed=$("$tool" list) || fail "list"
grep -qx "injection library (trace, --with-torch): $prefix/lib/sdpa-prof/libsdpa-prof-inject.so" <<<"$listed" ||
  fail "list does not name the installed injection library: $(tail -2 <<<"$listed")"
grep -qx "PyTorch script (--with-torch): $prefix/share/sdpa-prof/torch_sdpa.py" <<<"$listed" ||
  fail "list does not name the installed torch script: $(tail -2 <<<"$listed")"
"$tool" --config "$prefix/share/sdpa-prof/configs/ci.json" --dry-run >/dev/null || fail "--dry-run of an installed preset"
"$tool" report "$source/tests/data/recorded-h200-default-run1.json" >/dev/null || fail "report"
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
# The .deb (cpack) holds the same files under /usr.
if command -v dpkg-deb >/dev/null && command -v cpack >/dev/null; then
  (cd "$prefix" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$prefix/deb" >"$prefix/cpack.log" 2>&1) ||
    { cat "$prefix/cpack.log"; fail "cpack -G DEB"; }
  contents=$(dpkg-deb -c "$prefix"/deb/*.deb) || fail "dpkg-deb -c"
  for f in ./usr/bin/sdpa-prof ./usr/lib/sdpa-prof/libsdpa-prof-inject.so ./usr/share/sdpa-prof/torch_sdpa.py \
           ./usr/share/sdpa-prof/configs/ci.json; do
    grep -q " $f\$" <<<"$contents" || fail "the .deb has no $f"
  done
  echo "deb: $(basename "$prefix"/deb/*.deb)"
fi
echo "install_check: ok ($prefix)"
