#include "model/comparison.h"

#include <algorithm>

namespace sdpa {

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

}  // namespace sdpa
