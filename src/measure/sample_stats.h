// Statistics of timing samples and the rule that decides when to stop taking them.
#pragma once

#include <vector>

namespace sdpa {

struct SampleStats {
  int count = 0;
  double median = 0;
  double mean = 0;
  double min = 0;
  double max = 0;
  double q1 = 0;  // 25th percentile
  double q3 = 0;  // 75th percentile
  // Half-width of the ~95% confidence interval of the median, over the median: how far the
  // true median may lie from the reported one. Shrinks as 1/sqrt(count) for steady samples.
  double relative_spread = 0;
};

// Summary of `samples` (any order, at least one).
SampleStats summarize(std::vector<double> samples);

struct StoppingRule {
  double max_noise = 0.005;  // stop once relative_spread is under this
  int min_samples = 10;
  double min_time_s = 0.5;   // total sampled time before stopping is allowed
  double timeout_s = 15.0;   // give up on convergence after this much sampled time
  int max_samples = 100000;  // a hard cap whatever the times
};

enum class StopDecision { keep_going, converged, timed_out };

// Decides after each sample: `samples` so far, `elapsed_s` spent sampling.
StopDecision should_stop(const StoppingRule& rule, const std::vector<double>& samples, double elapsed_s);

}  // namespace sdpa
