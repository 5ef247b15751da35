// Baseline against new results: per case a verdict that accounts for both runs' noise.
#pragma once

#include "model/comparison.h"
#include "model/result.h"

namespace sdpa {

// Relative noise of one timing: its median's relative spread, or for results older than
// schema 3, half its min..max range over the median.
double relative_noise(const TimingStats& t);

// A slowdown that the new run's lower SM clock explains (both runs carry clocks) is "slower, clock
// -N%", not a regression, unless `strict_clock`.
Comparison compare_reports(const RunReport& base, const RunReport& next, double threshold,
                           bool strict_clock = false);

}  // namespace sdpa
