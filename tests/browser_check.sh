#!/usr/bin/env bash
# Usage: browser_check.sh SDPA_PROF BASE.json NEW.json OUT_DIR
# The HTML pages in a real browser: writes `report BASE.json --html` and `compare BASE NEW --html`
# into OUT_DIR, loads each in headless Chromium and checks that it loads with no console or page
# error, that its scripts ran to their end, that it has the expected headings, charts and one
# row per case, and that it fetches nothing; then screenshots the report (OUT_DIR/report.png).
# It first checks the checker: the same page with a broken script must fail.
# Exit 77 (skipped) when Chromium is not installed (scripts/install-deps.sh installs it).
set -euo pipefail
tool=$1
base=$2
next=$3
out=$4
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "browser_check: no chromium on PATH (scripts/install-deps.sh installs it); skipped"
  exit 77
fi
mkdir -p "$out"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --no-first-run --no-default-browser-check --user-data-dir="$profile"
       --enable-logging=stderr --v=0 --virtual-time-budget=5000)

# render PAGE.html NAME: the DOM after the scripts ran, and the browser's log (console included).
render() {
  timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$1" >"$out/$2.dom" 2>"$out/$2.log"
}

# check NAME PAGE.html KIND CASES: exit 0 when the page is sound.
check() {
  python3 - "$out/$1.dom" "$out/$1.log" "$2" "$3" "$4" <<'PY'
import re, sys
from html.parser import HTMLParser

dom_path, log_path, page_path, kind, cases = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
problems = []

class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.html_attrs, self.headings, self.charts, self.rows = {}, [], [], 0
        self.heading = None
        self.tbody_of = []  # class of the table each open tbody belongs to
        self.table = []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.html_attrs = a
        elif tag in ("h1", "h2"):
            self.heading = ""
        elif tag == "svg" and "chart" in (a.get("class") or "").split():
            self.charts.append(a.get("id"))
        elif tag == "table":
            self.table.append(a.get("class") or "")
        elif tag == "tr" and self.table and "sortable" in self.table[-1].split() and (a.get("class") or "").startswith("case"):
            self.rows += 1
    def handle_endtag(self, tag):
        if tag in ("h1", "h2") and self.heading is not None:
            self.headings.append(self.heading.strip())
            self.heading = None
        elif tag == "table" and self.table:
            self.table.pop()
    def handle_data(self, data):
        if self.heading is not None:
            self.heading += data

page = Page()
page.feed(open(dom_path, encoding="utf-8").read())
if page.html_attrs.get("data-scripts-ran") != "yes":
    problems.append("the page's scripts did not run to their end")
if page.html_attrs.get("data-page-errors") != "0":
    problems.append(f"the page recorded errors: data-page-errors={page.html_attrs.get('data-page-errors')!r}")
console = [l.strip() for l in open(log_path, encoding="utf-8", errors="replace") if "CONSOLE" in l or "Uncaught" in l]
if console:
    problems.append("console messages: " + " | ".join(console[:5]))
want = {"report": (["Environment", "Results", "Summary", "Charts", "Cases"], ["chart-tflops", "chart-kernel-time", "chart-kernels"]),
        "compare": (["Verdicts", "Chart", "Environments"], ["chart-change"])}[kind]
for h in want[0]:
    if h not in page.headings:
        problems.append(f"no heading {h!r} (headings: {page.headings})")
if page.charts != want[1]:
    problems.append(f"charts {page.charts}, expected {want[1]}")
if page.rows != cases:
    problems.append(f"{page.rows} rows in the sortable table, expected one per case: {cases}")
source = open(page_path, encoding="utf-8").read()
for pattern in [r"""(?:src|href)\s*=\s*["']?\s*(?:https?:|//)""", r"url\(", r"@import", r"<link\b", r"<iframe\b", r"https?://"]:
    if re.search(pattern, source, re.I):
        problems.append(f"the page refers to something outside itself: /{pattern}/")
if problems:
    print(f"{page_path}: FAIL")
    for p in problems:
        print("  " + p)
    sys.exit(1)
print(f"{page_path}: ok ({len(page.headings)} headings, charts {page.charts}, {page.rows} rows, no console messages)")
PY
}

cases_in() { python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["cases"]))' "$1"; }

"$tool" report "$base" --html "$out/report.html" --quiet >/dev/null
# compare exits 1 on a regression: a verdict, not a failure of the page.
"$tool" compare "$base" "$next" --html "$out/compare.html" --json "$out/compare.json" >/dev/null || [ $? -eq 1 ]
report_cases=$(cases_in "$base")
compare_cases=$(cases_in "$out/compare.json")

# The checker must be able to fail: a script error on an otherwise good page.
sed 's|</body>|<script>not_a_function_of_this_page();</script></body>|' "$out/report.html" >"$out/broken.html"
render "$out/broken.html" broken
if check broken "$out/broken.html" report "$report_cases" >"$out/broken.check" 2>&1; then
  cat "$out/broken.check"
  echo "browser_check: FAIL: a page with a script error passed the checks"
  exit 1
fi
echo "broken page rejected as it should be:"
sed 's/^/  /' "$out/broken.check"

render "$out/report.html" report
check report "$out/report.html" report "$report_cases"
render "$out/compare.html" compare
check compare "$out/compare.html" compare "$compare_cases"

# fits PAGE.html NAME WIDTH [whole]: at WIDTH px the page does not scroll sideways: a table wider
# than its box scrolls inside the box; with `whole`, the results table fits its box. Measured by a
# script added to a copy of the page.
fits() {
  python3 - "$1" "$out/$2.fit.html" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
measure = ("<script>window.addEventListener('load', function () { var d = document.documentElement;"
           " var wrap = document.querySelector('#results .table-wrap');"
           " d.setAttribute('data-fit', [d.scrollWidth, d.clientWidth, wrap.scrollWidth, wrap.clientWidth].join(' ')); });"
           "</script></body>")
open(sys.argv[2], "w", encoding="utf-8").write(page.replace("</body>", measure))
PY
  timeout 120 "$browser" "${flags[@]}" --window-size="$3,3000" --dump-dom "file://$out/$2.fit.html" 2>/dev/null |
    python3 -c '
import re, sys
m = re.search(r"data-fit=\"(\d+) (\d+) (\d+) (\d+)\"", sys.stdin.read())
assert m, "the measuring script did not run"
page, view, table, box = map(int, m.groups())
print(f"{sys.argv[1]} at {sys.argv[2]} px: the page {page} px in {view}, the results table {table} px in its {box} px box")
assert page <= view, "the page scrolls sideways"
assert sys.argv[3] != "whole" or table <= box, "the results table does not fit its box"' "$2" "$3" "${4:-}"
}
# The check must be able to fail: without its box's scrolling, the table widens a narrow page.
sed 's/\.table-wrap { overflow-x: auto; }/.table-wrap { }/' "$out/report.html" >"$out/unboxed.html"
if fits "$out/unboxed.html" unboxed 900 >"$out/unboxed.fit" 2>&1; then
  cat "$out/unboxed.fit"
  echo "browser_check: FAIL: a table overflowing the page passed the width check"
  exit 1
fi
fits "$out/report.html" report 1400 whole
fits "$out/report.html" report-narrow 900

timeout 120 "$browser" "${flags[@]}" --hide-scrollbars --window-size=1400,3000 --screenshot="$out/report.png" \
  "file://$out/report.html" 2>"$out/screenshot.log"
python3 - "$out/report.png" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
width, height = struct.unpack(">II", data[16:24])
assert (width, height) == (1400, 3000), (width, height)
print(f"screenshot {sys.argv[1]}: {width}x{height}, {len(data)} bytes")
PY
