#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/case_key.h"
#include "report/cell_escape.h"
#include "report/report.h"

namespace sdpa {
namespace {

std::string ms_cell(const std::optional<double>& ms) { return ms ? fmt::format("{:.3f}", *ms) : "-"; }

std::string change_cell(const CaseComparison& c) {
  return c.base_ms && c.new_ms ? fmt::format("{:+.1f}%", 100 * c.change) : "-";
}

// Said below a comparison that has a slowdown the clock explains.
std::string clock_legend(const Comparison& c) {
  if (std::none_of(c.cases.begin(), c.cases.end(), [](const CaseComparison& k) { return k.verdict == Verdict::slower_clock; }))
    return {};
  return fmt::format("slower, clock: slower, but at equal SM clocks within the threshold or the noise (an estimate: "
                     "a compute-bound kernel's time scales with the clock); {}\n",
                     c.strict_clock ? "a regression under --strict-clock" : "not a regression (--strict-clock makes it one)");
}

}  // namespace

Tone verdict_tone(const CaseComparison& k) {
  if (k.regression) return Tone::bad;
  if (k.verdict == Verdict::faster) return Tone::good;
  if (k.verdict == Verdict::unclear || k.verdict == Verdict::not_comparable) return Tone::warn;
  return Tone::plain;
}

std::string format_comparison_table(const Comparison& c, const TextStyle& style) {
  std::string out;
  for (const std::string& d : c.environment_differences)
    out += paint("environment differs: " + d, Tone::warn, style.colour) + "\n";
  std::size_t width = 14;  // wider for names such as torch:naive-inplace
  for (const CaseComparison& k : c.cases) width = std::max(width, k.backend.size());
  out += fmt::format("{:<{}} {:<26} {:<5} {:<6} {:>10} {:>10} {:>8} {:>7}  {}\n", "backend", width, "shape",
                     "dtype", "causal", "base ms", "new ms", "change", "noise", "verdict");
  for (const CaseComparison& k : c.cases) {
    std::string verdict = k.regression ? fmt::format("REGRESSION ({})", verdict_text(k)) : verdict_text(k);
    if (!k.note.empty()) verdict += ": " + k.note;
    out += fmt::format("{:<{}} {:<26} {:<5} {:<6} {:>10} {:>10} {:>8} {:>6.1f}%  {}\n", k.backend, width,
                       k.problem.shape_label(), dtype_name(k.problem.dtype),
                       k.problem.causal ? "yes" : "no", ms_cell(k.base_ms), ms_cell(k.new_ms),
                       change_cell(k), 100 * k.noise, paint(verdict, verdict_tone(k), style.colour));
  }
  const auto regressions = std::count_if(c.cases.begin(), c.cases.end(),
                                         [](const CaseComparison& k) { return k.regression; });
  out += paint(fmt::format("{} cases, {} regressions (threshold {:.1f}%)", c.cases.size(), regressions,
                           100 * c.threshold),
               regressions > 0 ? Tone::bad : Tone::plain, style.colour) +
         "\n";
  return out + clock_legend(c);
}

std::string format_comparison_markdown(const Comparison& c) {
  const auto regressions = std::count_if(c.cases.begin(), c.cases.end(),
                                         [](const CaseComparison& k) { return k.regression; });
  std::string out = fmt::format("### sdpa-prof: {} regression{} in {} cases (threshold {:.1f}%)\n\n",
                                regressions, regressions == 1 ? "" : "s", c.cases.size(), 100 * c.threshold);
  for (const std::string& d : c.environment_differences) out += "> environment differs: " + markdown_cell(d) + "\n";
  if (!c.environment_differences.empty()) out += "\n";
  out += "| backend | shape | dtype | causal | base ms | new ms | change | noise | verdict |\n";
  out += "|---|---|---|---|---:|---:|---:|---:|---|\n";
  for (const CaseComparison& k : c.cases) {
    std::string verdict = k.regression ? fmt::format("**regression** ({})", verdict_text(k)) : verdict_text(k);
    if (!k.note.empty()) verdict += ": " + k.note;
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {:.1f}% | {} |\n", markdown_cell(k.backend),
                       k.problem.shape_label(), dtype_name(k.problem.dtype),
                       k.problem.causal ? "yes" : "no", ms_cell(k.base_ms), ms_cell(k.new_ms),
                       change_cell(k), 100 * k.noise, markdown_cell(verdict));
  }
  if (const std::string legend = clock_legend(c); !legend.empty()) out += "\n" + legend;
  return out;
}

nlohmann::json comparison_to_json(const Comparison& c) {
  nlohmann::json cases = nlohmann::json::array();
  for (const CaseComparison& k : c.cases) {
    nlohmann::json j{{"backend", k.backend},          {"key", case_key(k.backend, k.problem).text()},
                     {"verdict", verdict_name(k.verdict)}, {"regression", k.regression},
                     {"change", k.change},             {"noise", k.noise}};
    j["base_ms"] = k.base_ms ? nlohmann::json(*k.base_ms) : nlohmann::json(nullptr);
    j["new_ms"] = k.new_ms ? nlohmann::json(*k.new_ms) : nlohmann::json(nullptr);
    if (!k.note.empty()) j["note"] = k.note;
    j["regression_kind"] = regression_kind_id(k.kind);
    if (k.dram_bytes_change) j["dram_bytes_change"] = *k.dram_bytes_change;
    if (k.clock_change) {
      j["clock_change"] = *k.clock_change;
      j["change_at_equal_clock"] = *k.change_at_equal_clock;
    }
    cases.push_back(j);
  }
  return nlohmann::json{{"schema", "sdpa-prof/comparison"},
                        {"schema_version", 1},
                        {"threshold", c.threshold},
                        {"strict_clock", c.strict_clock},
                        {"environment_differences", c.environment_differences},
                        {"regression", c.any_regression()},
                        {"cases", cases}};
}

}  // namespace sdpa
