// Rules over a case's profile, each saying in one line what the profile shows when it is there:
// hidden copies, tensor cores left idle, a mask rebuilt every call, safe-softmax extras, low
// occupancy and its cause, a fused backend that launches more than one kernel.
#pragma once

#include <vector>

#include "model/result.h"

namespace sdpa {

// Counts are per call of `pass`, and the text names it ("3 kernels per backward").
std::vector<Finding> profile_findings(const CaseProfile& profile, AttentionPass pass);

// Rules over the kernels' hardware counters: a DRAM-bound forward (bandwidth, bytes moved
// against the minimum and against the backend's own count), tensor pipes busy under half the
// time, achieved occupancy far below theoretical. `sm_count` sizes the waves of a grid.
std::vector<Finding> counter_findings(const CaseProfile& profile, const Problem& problem, int sm_count);

}  // namespace sdpa
