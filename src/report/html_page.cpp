#include "report/html_page.h"

#include <fmt/format.h>

#include "report/svg_chart.h"

namespace sdpa {
namespace {

constexpr const char* kStyle = R"CSS(
:root { --fg: #1d1f23; --muted: #5f6670; --bg: #ffffff; --panel: #f5f6f8; --line: #d9dce1;
        --best: #1a7f37; --bad: #c62828; --warn: #9a6700; --accent: #1f6feb; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e8eb; --muted: #9aa3ad; --bg: #16181c; --panel: #20242a; --line: #343a42;
          --best: #3fb950; --bad: #f85149; --warn: #d29922; --accent: #58a6ff; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1600px; padding: 24px 32px 64px; color: var(--fg); background: var(--bg);
       font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 18px 0 6px; }
p.subtitle { color: var(--muted); margin: 0 0 12px; }
nav a { margin-right: 14px; color: var(--accent); text-decoration: none; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
dl.environment { display: grid; grid-template-columns: max-content 1fr; gap: 4px 18px; margin: 0; }
dl.environment dt { color: var(--muted); }
dl.environment dd { margin: 0; overflow-wrap: anywhere; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 6px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
table.results, table.comparison { font-size: 13px; }
th { background: var(--panel); position: sticky; top: 0; vertical-align: bottom; }
td { white-space: nowrap; }
td.reason { white-space: normal; min-width: 240px; }
td.num, th.num { text-align: right; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th[aria-sort="ascending"]::after { content: " \25B2"; font-size: 10px; }
table.sortable th[aria-sort="descending"]::after { content: " \25BC"; font-size: 10px; }
tr.best td:first-child { border-left: 4px solid var(--best); }
tr.best td.backend, tr.best td.time { color: var(--best); font-weight: 600; }
tr.failed td { color: var(--bad); }
tr.skipped td { color: var(--muted); font-style: italic; }
table.kernels td.kernel-name { white-space: normal; max-width: 560px; overflow-wrap: anywhere; }
ul.summary { margin: 4px 0 12px; padding-left: 20px; }
ul.summary li { margin: 3px 0; }
ul.summary li.fastest { color: var(--best); font-weight: 600; }
ul.summary li.failed { color: var(--bad); }
ul.summary li.skipped, ul.summary li.warning { color: var(--warn); }
p.legend { color: var(--muted); font-size: 12.5px; max-width: 1100px; }
figure { margin: 18px 0 28px; }
figcaption { color: var(--muted); font-size: 12.5px; max-width: 960px; }
svg.chart { max-width: 100%; height: auto; display: block; background: var(--bg); }
svg.chart text { font: 12px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; fill: var(--fg); }
svg.chart .chart-title { font-weight: 600; font-size: 14px; }
svg.chart .axis-label, svg.chart .note { fill: var(--muted); }
svg.chart .plot { fill: none; stroke: var(--line); }
svg.chart .grid { stroke: var(--line); stroke-width: 1; }
svg.chart .reference { stroke: var(--muted); stroke-dasharray: 6 4; stroke-width: 1.5; }
svg.chart .reference-label { fill: var(--muted); font-style: italic; }
svg.chart .noise { stroke: var(--fg); stroke-width: 1.5; }
details.case { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; padding: 6px 12px; background: var(--panel); }
details.case[open] { background: var(--bg); }
details.case > summary { cursor: pointer; font-weight: 600; }
details.case > summary .facts { font-weight: 400; color: var(--muted); }
details.case p { margin: 6px 0; }
ul.findings li { margin: 3px 0; }
.verdict-regression { color: var(--bad); font-weight: 600; }
.verdict-faster { color: var(--best); }
.verdict-unclear, .verdict-not-comparable { color: var(--warn); }
#page-errors { color: var(--bad); border: 2px solid var(--bad); padding: 8px; white-space: pre-wrap; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
)CSS";

// First in <head>: errors from here on land on the page and in data-page-errors.
constexpr const char* kErrorScript = R"JS(
(function () {
  var errors = [];
  function show() {
    document.documentElement.setAttribute('data-page-errors', String(errors.length));
    var box = document.getElementById('page-errors');
    if (box && errors.length) { box.hidden = false; box.textContent = 'Errors on this page:\n' + errors.join('\n'); }
  }
  window.addEventListener('error', function (e) {
    var where = e.target && e.target !== window ? ' (' + e.target.tagName + ' ' + (e.target.src || e.target.href || '') + ')' : '';
    errors.push((e.message || 'a resource failed to load') + where + (e.lineno ? ' at line ' + e.lineno : ''));
    show();
  }, true);
  window.addEventListener('unhandledrejection', function (e) { errors.push('unhandled rejection: ' + e.reason); show(); });
  document.addEventListener('DOMContentLoaded', show);
})();
)JS";

// Last in <body>: click (or Enter on) a header to sort by it; numbers as numbers, "-" last.
constexpr const char* kSortScript = R"JS(
(function () {
  function key(row, col) {
    var cell = row.cells[col];
    return cell.hasAttribute('data-sort') ? cell.getAttribute('data-sort') : cell.textContent.trim();
  }
  function compare(a, b) {
    var x = parseFloat(a), y = parseFloat(b);
    if (!isNaN(x) && !isNaN(y)) return x - y;
    if (isNaN(x) !== isNaN(y)) return isNaN(x) ? 1 : -1;
    return a.localeCompare(b, undefined, { numeric: true });
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.tabIndex = 0;
      th.title = 'sort by ' + th.textContent;
      function sort() {
        var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) { return dir * compare(key(a, col), key(b, col)); });
        rows.forEach(function (r) { body.appendChild(r); });
      }
      th.addEventListener('click', sort);
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); }
      });
    });
  });
  document.documentElement.setAttribute('data-scripts-ran', 'yes');
})();
)JS";

void entry(std::string& out, const char* term, const std::string& html) {
  out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", term, html);
}

}  // namespace

std::string html_document(const std::string& title, const std::string& body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, "
      "initial-scale=1\">\n<title>{}</title>\n"
      "<script>{}</script>\n<style>{}</style>\n</head>\n<body>\n<pre id=\"page-errors\" "
      "hidden></pre>\n{}"
      "<script>{}</script>\n</body>\n</html>\n",
      html_escape(title), kErrorScript, kStyle, body, kSortScript);
}

std::string html_environment(const RunReport& report) {
  const Environment& e = report.environment;
  std::string out = "<dl class=\"environment\">\n";
  if (e.device) {
    const DeviceInfo& d = *e.device;
    entry(out, "device",
          html_escape(fmt::format(
              "{} (sm_{}{}, {} SMs, {} memory, {:.0f} MiB L2, peak SM clock {} MHz, ECC {})",
              d.name, d.cc_major, d.cc_minor, d.sm_count, gib_text(d.total_memory),
              static_cast<double>(d.l2_bytes) / 1048576.0, d.sm_clock_khz / 1000,
              d.ecc_enabled ? "on" : "off")));
    entry(out, "software",
          html_escape(fmt::format(
              "driver {}, CUDA runtime {}, cuBLAS {}, cuDNN {}", version_text(d.driver_version),
              version_text(d.runtime_version), d.cublas_version,
              d.cudnn_version == 0 ? std::string("not loaded") : std::to_string(d.cudnn_version))));
  }
  if (e.ceilings) {
    const Ceilings& c = *e.ceilings;
    entry(out, "ceilings",
          html_escape(fmt::format(
              "bf16 GEMM {:.1f} TFLOP/s, fp16 GEMM {:.1f} TFLOP/s, device copy {:.2f} TB/s{} "
              "(measured {}: {})",
              c.bf16_gemm_tflops, c.fp16_gemm_tflops, c.copy_tb_per_s,
              c.read_tb_per_s > 0 ? fmt::format(", HBM read {:.2f} TB/s", c.read_tb_per_s) : "", c.measured_at,
              c.method)));
  }
  entry(
      out, "profile",
      html_escape(e.profiler.enabled ? "CUPTI: " + e.profiler.description
                                     : "off, timing only" + (e.profiler.description.empty()
                                                                 ? std::string()
                                                                 : ": " + e.profiler.description)));
  const SweepConfig& s = report.config;
  entry(out, "timing",
        html_escape(fmt::format(
            "{} warm-up forwards; {}; sample until the median's spread is under {:.1f}%, after "
            "{} samples and {:g} s, at most {:g} s",
            s.warmup, s.hot ? "warm L2 (--hot)" : "L2 flushed before every sample",
            100 * s.stopping.max_noise, s.stopping.min_samples, s.stopping.min_time_s,
            s.stopping.timeout_s)));
  entry(out, "command", "<code>" + html_escape(e.command_line) + "</code>");
  entry(out, "tool", html_escape(fmt::format("sdpa-prof {} (git {})", e.tool_version, e.git_sha)));
  entry(
      out, "host",
      html_escape(fmt::format("{}, started {} (UTC), seed {}", e.hostname, e.started_at, e.seed)));
  return out + "</dl>\n";
}

}  // namespace sdpa
