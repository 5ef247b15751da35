#include <algorithm>

#include <fmt/format.h>

#include "report/html_page.h"
#include "report/report.h"
#include "report/svg_chart.h"

namespace sdpa {
namespace {

std::string ms_cell(const std::optional<double>& ms) {
  return ms ? fmt::format("{:.3f}", *ms) : "-";
}

std::string verdict_class(const CaseComparison& k) {
  const Tone tone = verdict_tone(k);
  if (tone == Tone::bad) return "verdict-regression";
  if (tone == Tone::good) return "verdict-faster";
  if (tone == Tone::warn) return "verdict-unclear";
  return "";
}

std::string verdict_table(const Comparison& c) {
  std::string out =
      "<div class=\"table-wrap\"><table class=\"comparison "
      "sortable\">\n<thead><tr><th>backend</th><th>shape</th>"
      "<th>dtype</th><th>causal</th><th class=\"num\">base ms</th><th class=\"num\">new ms</th><th "
      "class=\"num\">"
      "change</th><th class=\"num\">noise</th><th>verdict</th></tr></thead>\n<tbody>\n";
  for (const CaseComparison& k : c.cases) {
    std::string verdict = k.regression ? fmt::format("regression ({})", verdict_name(k.verdict))
                                       : verdict_name(k.verdict);
    if (!k.note.empty()) verdict += ": " + k.note;
    out += fmt::format(
        "<tr class=\"case{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td "
        "class=\"num\">{}</td><td class=\"num\">{}"
        "</td><td class=\"num\">{}</td><td class=\"num\">{:.1f}%</td><td "
        "class=\"{}\">{}</td></tr>\n",
        k.regression ? " regression" : "", html_escape(k.backend),
        html_escape(k.problem.shape_label()), dtype_name(k.problem.dtype),
        k.problem.causal ? "yes" : "no", ms_cell(k.base_ms), ms_cell(k.new_ms),
        k.base_ms && k.new_ms ? fmt::format("{:+.1f}%", 100 * k.change) : "-", 100 * k.noise,
        verdict_class(k), html_escape(verdict));
  }
  return out + "</tbody>\n</table></div>\n";
}

std::string change_chart(const Comparison& c) {
  ChangeChart chart{
      .id = "chart-change", .title = "Change of each case's median time", .threshold = c.threshold};
  for (const CaseComparison& k : c.cases)
    if (k.base_ms && k.new_ms)
      chart.rows.push_back({fmt::format("{} \xC2\xB7 {} {}", k.backend, k.problem.shape_label(),
                                        dtype_name(k.problem.dtype)),
                            k.change, k.noise, k.regression});
  return svg_change_chart(chart);
}

}  // namespace

std::string format_comparison_html(const Comparison& c, const RunReport& base,
                                   const RunReport& next) {
  const auto regressions = std::count_if(c.cases.begin(), c.cases.end(),
                                         [](const CaseComparison& k) { return k.regression; });
  const std::string title = fmt::format("sdpa-prof compare: {} regression{} in {} cases",
                                        regressions, regressions == 1 ? "" : "s", c.cases.size());
  std::string body = fmt::format(
      "<header>\n<h1>{}</h1>\n<p class=\"subtitle\">threshold {:.1f}%: a case is slower or faster "
      "when its median "
      "moved by more than that and more than the two runs' noise</p>\n<nav><a "
      "href=\"#verdicts\">Verdicts</a>"
      "<a href=\"#charts\">Chart</a><a href=\"#environment\">Environments</a></nav>\n</header>\n",
      html_escape(title), 100 * c.threshold);
  if (!c.environment_differences.empty()) {
    body += "<ul class=\"summary\">\n";
    for (const std::string& d : c.environment_differences)
      body += fmt::format("<li class=\"warning\">environment differs: {}</li>\n", html_escape(d));
    body += "</ul>\n";
  }
  body += "<section id=\"verdicts\">\n<h2>Verdicts</h2>\n" + verdict_table(c) + "</section>\n";
  body += "<section id=\"charts\">\n<h2>Chart</h2>\n<figure>\n" + change_chart(c) +
          "<figcaption>Each case's change against the baseline; the black bar is the two runs' "
          "noise, the dashed lines "
          "the threshold. Red: a regression.</figcaption>\n</figure>\n</section>\n";
  body += "<section id=\"environment\">\n<h2>Environments</h2>\n<h3>Baseline</h3>\n" +
          html_environment(base) + "<h3>New</h3>\n" + html_environment(next) + "</section>\n";
  body +=
      "<footer>Written by sdpa-prof: one file, nothing fetched (no network, no external scripts or "
      "fonts).</footer>\n";
  return html_document(title, body);
}

}  // namespace sdpa
