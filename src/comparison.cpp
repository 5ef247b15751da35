#include "comparison.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sdpa {
namespace {

void note_difference(std::vector<std::string>& out, const char* what, const std::string& a,
                     const std::string& b) {
  if (a != b) out.push_back(fmt::format("{}: {} -> {}", what, a, b));
}

std::vector<std::string> environment_differences(const Environment& a, const Environment& b) {
  std::vector<std::string> out;
  if (!a.device || !b.device) return out;
  const DeviceInfo& x = *a.device;
  const DeviceInfo& y = *b.device;
  note_difference(out, "device", x.name, y.name);
  note_difference(out, "driver", version_text(x.driver_version), version_text(y.driver_version));
  note_difference(out, "CUDA runtime", version_text(x.runtime_version), version_text(y.runtime_version));
  note_difference(out, "cuBLAS", std::to_string(x.cublas_version), std::to_string(y.cublas_version));
  note_difference(out, "cuDNN", std::to_string(x.cudnn_version), std::to_string(y.cudnn_version));
  return out;
}

// Structure that changed for the worse, whatever the time says: a fused backend that now
// launches more than one kernel, more kernels than before, a memcpy that was not there.
std::string structural_regression(const CaseResult& base, const CaseResult& next) {
  if (!base.profile || !next.profile) return {};
  const double base_kernels = base.profile->kernels_per_forward();
  const double new_kernels = next.profile->kernels_per_forward();
  const double base_copies = base.profile->memcpys_per_forward();
  const double new_copies = next.profile->memcpys_per_forward();
  if (new_copies > base_copies)
    return fmt::format("memcpys per forward {:g} -> {:g}", base_copies, new_copies);
  if (new_kernels > base_kernels)
    return fmt::format("kernels per forward {:g} -> {:g}{}", base_kernels, new_kernels,
                       base_kernels == 1 ? " (no longer one fused kernel)" : "");
  return {};
}

CaseComparison compare_case(const CaseResult& base, const CaseResult& next, double threshold) {
  CaseComparison c;
  c.backend = next.backend;
  c.problem = next.problem;
  if (base.timing) c.base_ms = base.timing->median_ms;
  if (next.timing) c.new_ms = next.timing->median_ms;

  if (base.status == CaseStatus::ok && next.status != CaseStatus::ok) {
    c.regression = true;
    c.note = fmt::format("was ok, now {}: {}", status_name(next.status), next.reason);
    return c;
  }
  if (!base.timing || !next.timing) {
    c.note = fmt::format("base {}, new {}", status_name(base.status), status_name(next.status));
    return c;
  }
  c.change = next.timing->median_ms / base.timing->median_ms - 1.0;
  c.noise = relative_noise(*base.timing) + relative_noise(*next.timing);
  if (std::string structure = structural_regression(base, next); !structure.empty()) {
    c.verdict = c.change > 0 ? Verdict::slower : (c.change < 0 ? Verdict::faster : Verdict::same);
    c.regression = true;
    c.note = structure;
    return c;
  }
  if (std::abs(c.change) < threshold) {
    c.verdict = Verdict::same;
  } else if (std::abs(c.change) <= c.noise) {
    c.verdict = Verdict::unclear;
    c.note = fmt::format("the change is inside the runs' noise ({:.1f}%)", 100 * c.noise);
  } else {
    c.verdict = c.change > 0 ? Verdict::slower : Verdict::faster;
    c.regression = c.verdict == Verdict::slower;
  }
  return c;
}

std::string ms_cell(const std::optional<double>& ms) { return ms ? fmt::format("{:.3f}", *ms) : "-"; }

std::string change_cell(const CaseComparison& c) {
  return c.base_ms && c.new_ms ? fmt::format("{:+.1f}%", 100 * c.change) : "-";
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::faster:
      return "faster";
    case Verdict::slower:
      return "slower";
    case Verdict::same:
      return "same";
    case Verdict::unclear:
      return "unclear";
    case Verdict::not_comparable:
      return "not comparable";
    case Verdict::only_in_base:
      return "only in base";
    case Verdict::only_in_new:
      return "only in new";
  }
  return "unknown";
}

bool Comparison::any_regression() const {
  return std::any_of(cases.begin(), cases.end(), [](const CaseComparison& c) { return c.regression; });
}

std::string case_key(const std::string& backend, const Problem& p) {
  return fmt::format("{} {} {} {}", backend, p.shape_label(), dtype_name(p.dtype),
                     p.causal ? "causal" : "non-causal");
}

double relative_noise(const TimingStats& t) {
  if (t.relative_spread >= 0) return t.relative_spread;
  return t.median_ms > 0 ? (t.max_ms - t.min_ms) / (2.0 * t.median_ms) : 0.0;  // before schema 3
}

Comparison compare_reports(const RunReport& base, const RunReport& next, double threshold) {
  Comparison out;
  out.threshold = threshold;
  out.environment_differences = environment_differences(base.environment, next.environment);
  std::map<std::string, const CaseResult*> base_cases;
  for (const CaseResult& c : base.cases) base_cases[case_key(c.backend, c.problem)] = &c;
  for (const CaseResult& c : next.cases) {
    const auto it = base_cases.find(case_key(c.backend, c.problem));
    if (it == base_cases.end()) {
      CaseComparison only;
      only.backend = c.backend;
      only.problem = c.problem;
      if (c.timing) only.new_ms = c.timing->median_ms;
      only.verdict = Verdict::only_in_new;
      out.cases.push_back(only);
      continue;
    }
    out.cases.push_back(compare_case(*it->second, c, threshold));
    base_cases.erase(it);
  }
  for (const CaseResult& c : base.cases) {
    if (!base_cases.contains(case_key(c.backend, c.problem))) continue;
    CaseComparison only;
    only.backend = c.backend;
    only.problem = c.problem;
    if (c.timing) only.base_ms = c.timing->median_ms;
    only.verdict = Verdict::only_in_base;
    out.cases.push_back(only);
  }
  return out;
}

std::string format_comparison_table(const Comparison& c) {
  std::string out;
  for (const std::string& d : c.environment_differences) out += "environment differs: " + d + "\n";
  out += fmt::format("{:<14} {:<26} {:<5} {:<6} {:>10} {:>10} {:>8} {:>7}  {}\n", "backend", "shape",
                     "dtype", "causal", "base ms", "new ms", "change", "noise", "verdict");
  for (const CaseComparison& k : c.cases) {
    std::string verdict = k.regression ? fmt::format("REGRESSION ({})", verdict_name(k.verdict))
                                       : verdict_name(k.verdict);
    if (!k.note.empty()) verdict += ": " + k.note;
    out += fmt::format("{:<14} {:<26} {:<5} {:<6} {:>10} {:>10} {:>8} {:>6.1f}%  {}\n", k.backend,
                       k.problem.shape_label(), dtype_name(k.problem.dtype),
                       k.problem.causal ? "yes" : "no", ms_cell(k.base_ms), ms_cell(k.new_ms),
                       change_cell(k), 100 * k.noise, verdict);
  }
  const auto regressions = std::count_if(c.cases.begin(), c.cases.end(),
                                         [](const CaseComparison& k) { return k.regression; });
  out += fmt::format("{} cases, {} regressions (threshold {:.1f}%)\n", c.cases.size(), regressions,
                     100 * c.threshold);
  return out;
}

std::string format_comparison_markdown(const Comparison& c) {
  const auto regressions = std::count_if(c.cases.begin(), c.cases.end(),
                                         [](const CaseComparison& k) { return k.regression; });
  std::string out = fmt::format("### sdpa-prof: {} regression{} in {} cases (threshold {:.1f}%)\n\n",
                                regressions, regressions == 1 ? "" : "s", c.cases.size(), 100 * c.threshold);
  for (const std::string& d : c.environment_differences) out += "> environment differs: " + d + "\n";
  if (!c.environment_differences.empty()) out += "\n";
  out += "| backend | shape | dtype | causal | base ms | new ms | change | noise | verdict |\n";
  out += "|---|---|---|---|---:|---:|---:|---:|---|\n";
  for (const CaseComparison& k : c.cases) {
    std::string verdict = k.regression ? fmt::format("**regression** ({})", verdict_name(k.verdict))
                                       : verdict_name(k.verdict);
    if (!k.note.empty()) verdict += ": " + k.note;
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {:.1f}% | {} |\n", k.backend,
                       k.problem.shape_label(), dtype_name(k.problem.dtype),
                       k.problem.causal ? "yes" : "no", ms_cell(k.base_ms), ms_cell(k.new_ms),
                       change_cell(k), 100 * k.noise, verdict);
  }
  return out;
}

nlohmann::json comparison_to_json(const Comparison& c) {
  nlohmann::json cases = nlohmann::json::array();
  for (const CaseComparison& k : c.cases) {
    nlohmann::json j{{"backend", k.backend},          {"key", case_key(k.backend, k.problem)},
                     {"verdict", verdict_name(k.verdict)}, {"regression", k.regression},
                     {"change", k.change},             {"noise", k.noise}};
    j["base_ms"] = k.base_ms ? nlohmann::json(*k.base_ms) : nlohmann::json(nullptr);
    j["new_ms"] = k.new_ms ? nlohmann::json(*k.new_ms) : nlohmann::json(nullptr);
    if (!k.note.empty()) j["note"] = k.note;
    cases.push_back(j);
  }
  return nlohmann::json{{"schema", "sdpa-prof/comparison"},
                        {"schema_version", 1},
                        {"threshold", c.threshold},
                        {"environment_differences", c.environment_differences},
                        {"regression", c.any_regression()},
                        {"cases", cases}};
}

}  // namespace sdpa
