// The one result model: every printer (table, JSON) and every later consumer reads this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "device_info.h"
#include "problem.h"
#include "sweep.h"

namespace sdpa {

inline constexpr int kResultSchemaVersion = 1;

enum class CaseStatus { ok, skipped, failed };
const char* status_name(CaseStatus s);

struct Verification {
  double rel_l2_error = 0;  // ||out - ref|| / ||ref|| over finite outputs
  double max_abs_error = 0;
  uint64_t non_finite = 0;  // NaN/Inf outputs: unwritten (poisoned) elements land here
  double rel_l2_tolerance = 0;
  double max_abs_tolerance = 0;
  bool passed = false;
};

struct TimingStats {
  int warmup = 0;
  int samples = 0;
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
};

struct CaseResult {
  std::string backend;
  Problem problem;
  CaseStatus status = CaseStatus::skipped;
  std::string reason;           // why skipped or failed
  std::size_t predicted_bytes = 0;  // device memory the case needs, predicted before it runs
  std::optional<Verification> verification;
  std::optional<TimingStats> timing;

  double tflops() const;  // at the median time; 0 without timing
};

struct Environment {
  std::string tool_version;
  std::string git_sha;
  std::string command_line;
  std::string hostname;
  std::string started_at;  // ISO 8601, UTC
  uint64_t seed = 0;
  std::optional<DeviceInfo> device;  // none for a dry run
};

struct RunReport {
  Environment environment;
  SweepConfig config;
  std::vector<CaseResult> cases;

  bool any_failed() const;
};

}  // namespace sdpa
