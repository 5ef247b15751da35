#include <map>
#include <tuple>

#include <fmt/format.h>

#include "report.h"

namespace sdpa {
namespace {

std::string problem_key(const Problem& p) {
  return fmt::format("{}|{}|{}|{}", p.shape_label(), dtype_name(p.dtype), p.causal, p.scale);
}

std::string verified_cell(const CaseResult& c) {
  if (!c.verification) return "-";
  return fmt::format("{} {:.1e}", c.verification->passed ? "yes" : "NO", c.verification->rel_l2_error);
}

}  // namespace

std::string format_table(const RunReport& report) {
  std::map<std::string, double> fastest_ms;
  for (const CaseResult& c : report.cases) {
    if (c.status != CaseStatus::ok) continue;
    double& best = fastest_ms.try_emplace(problem_key(c.problem), c.timing->median_ms).first->second;
    best = std::min(best, c.timing->median_ms);
  }

  std::string out = fmt::format("{:<14} {:<26} {:<5} {:<6} {:>10} {:>21} {:>9} {:>8}  {:<13} {}\n",
                                "backend", "shape", "dtype", "causal", "median ms", "min..max ms",
                                "TFLOP/s", "vs best", "verified", "status");
  for (const CaseResult& c : report.cases) {
    const Problem& p = c.problem;
    std::string timing_cells = fmt::format("{:>10} {:>21} {:>9} {:>8}", "-", "-", "-", "-");
    if (c.timing) {
      const double best = fastest_ms.at(problem_key(p));
      timing_cells = fmt::format("{:>10.3f} {:>21} {:>9.1f} {:>7.2f}x", c.timing->median_ms,
                                 fmt::format("{:.3f}..{:.3f}", c.timing->min_ms, c.timing->max_ms),
                                 c.tflops(), c.timing->median_ms / best);
    }
    std::string status = status_name(c.status);
    if (!c.reason.empty()) status += ": " + c.reason;
    out += fmt::format("{:<14} {:<26} {:<5} {:<6} {}  {:<13} {}\n", c.backend, p.shape_label(),
                       dtype_name(p.dtype), p.causal ? "yes" : "no", timing_cells, verified_cell(c),
                       status);
  }
  return out;
}

}  // namespace sdpa
