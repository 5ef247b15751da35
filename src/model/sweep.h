// A sweep: the backends to run, the values given for each axis (axes.h), and how to measure.
// The cases are the cartesian product of the axes' values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/axes.h"
#include "model/problem.h"

namespace sdpa {

// When timing stops sampling a case.
struct StoppingRule {
  double max_noise = 0.005;  // stop once the median's relative spread is under this
  int min_samples = 10;
  double min_time_s = 0.5;   // total sampled time before stopping is allowed
  double timeout_s = 15.0;   // give up on convergence after this much sampled time
  int max_samples = 100000;  // a hard cap whatever the times
};

struct SweepConfig {
  std::string name = "custom";
  std::vector<std::string> backends{"all"};
  // Values given per axis name (preset, then CLI); an axis not here takes its defaults.
  std::map<std::string, std::vector<AxisValue>> axes;
  std::optional<uint64_t> seed;  // none: a fresh seed per run
  int warmup = 3;
  bool hot = false;  // back-to-back samples with a warm L2 instead of flushing it before each
  bool counters = true;  // a hardware-counter pass per case, where the GPU permits it
  StoppingRule stopping;

  // The values of `axis` this sweep runs: given ones, else the defaults; empty when the axis
  // follows another or leaves the Problem's own default.
  std::vector<AxisValue> values_of(const AxisSpec& axis) const;
};

// The most cases one sweep runs: past it the sweep is refused before it is expanded.
inline constexpr std::size_t kMaxSweepCases = 100000;

// Throws InputError, with the count, when the sweep has more than kMaxSweepCases cases, each
// problem being run `cases_per_problem` times (once per backend).
void check_sweep_size(const SweepConfig& config, std::size_t cases_per_problem,
                      const std::vector<AxisSpec>& axes = axis_table());

// Every problem of the sweep, validated, duplicates dropped; throws InputError naming the bad value.
std::vector<Problem> expand_problems(const SweepConfig& config,
                                     const std::vector<AxisSpec>& axes = axis_table());

}  // namespace sdpa
