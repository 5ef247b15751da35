// Statistics of timing samples and the rule that decides when to stop taking them.
#pragma once

#include <vector>

#include "model/sweep.h"

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


enum class StopDecision { keep_going, converged, timed_out };

// Decides after each sample: `samples` so far, `elapsed_s` spent sampling.
StopDecision should_stop(const StoppingRule& rule, const std::vector<double>& samples, double elapsed_s);

}  // namespace sdpa
