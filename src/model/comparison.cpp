#include "model/comparison.h"

#include <algorithm>

#include <fmt/format.h>

namespace sdpa {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::faster:
      return "faster";
    case Verdict::slower:
      return "slower";
    case Verdict::slower_clock:
      return "slower at a lower clock";
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

const char* regression_kind_id(RegressionKind k) {
  switch (k) {
    case RegressionKind::none: return "none";
    case RegressionKind::status: return "status";
    case RegressionKind::structure: return "structure";
    case RegressionKind::time: return "time";
    case RegressionKind::dram_bytes: return "dram-bytes";
  }
  return "none";
}

std::string verdict_text(const CaseComparison& c) {
  if (c.verdict == Verdict::slower_clock && c.clock_change)
    return fmt::format("slower, clock {:+.0f}%", 100 * *c.clock_change);
  return verdict_name(c.verdict);
}

bool Comparison::any_regression() const {
  return std::any_of(cases.begin(), cases.end(), [](const CaseComparison& c) { return c.regression; });
}

}  // namespace sdpa
