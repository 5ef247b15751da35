// From the counter pass's decoded ranges to per-kernel counters: a pure step, so that it can be
// checked on recorded values without a GPU.
#pragma once

#include <string>
#include <vector>

#include "model/profile.h"

namespace sdpa {

// One auto range (one kernel launch): a value per metric of the pass, in the pass's order.
using RangeValues = std::vector<double>;

// Range i is the forward's launch i (profile.launch_order[i]): each kernel gets the mean of its
// launches' values, per metric; a metric CUPTI gave as NaN or infinity is left out. Empty on
// success, else why the ranges do not match the profiled forward (and nothing is filled).
std::string attach_counters(CaseProfile& profile, const std::vector<std::string>& metrics,
                            const std::vector<RangeValues>& ranges);

}  // namespace sdpa
