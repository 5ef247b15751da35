// Rules over a case's profile, each saying in one line what the profile shows when it is there:
// hidden copies, tensor cores left idle, a mask rebuilt every call, safe-softmax extras, low
// occupancy and its cause, a fused backend that launches more than one kernel.
#pragma once

#include <vector>

#include "model/result.h"

namespace sdpa {

std::vector<Finding> profile_findings(const CaseProfile& profile);

}  // namespace sdpa
