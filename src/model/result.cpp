#include "model/result.h"

#include <algorithm>
#include <iterator>

namespace sdpa {

const char* status_name(CaseStatus s) {
  switch (s) {
    case CaseStatus::ok:
      return "ok";
    case CaseStatus::skipped:
      return "skipped";
    case CaseStatus::failed:
      return "failed";
  }
  return "unknown";
}

double CaseResult::tflops() const {
  if (!timing || timing->median_ms <= 0) return 0;
  return problem.flops() / (timing->median_ms * 1e-3) / 1e12;
}

double CaseResult::achieved_tb_per_s() const {
  if (!timing || timing->median_ms <= 0) return 0;
  return problem.min_bytes() / (timing->median_ms * 1e-3) / 1e12;
}

bool RunReport::any_failed() const {
  return std::any_of(cases.begin(), cases.end(),
                     [](const CaseResult& c) { return c.status == CaseStatus::failed; });
}

}  // namespace sdpa
