// Attributes recorded GPU work to the forwards that launched it and summarizes it per forward
// and per kernel, with each kernel's occupancy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/activity.h"
#include "profile/occupancy.h"
#include "model/result.h"

namespace sdpa {

// One forward of the profile pass: the name of its NVTX range, and CUPTI timestamps taken on
// the host just before and after run().
struct ForwardWindow {
  std::string name;
  uint64_t start = 0, end = 0;
};

// A kernel, copy or memset belongs to forward i when the API call that launched it (same
// correlation id) ran inside forward i's window: its NVTX range when CUPTI recorded one, else
// the host timestamps. `arch` empty: no occupancy.
CaseProfile analyze_activity(const ActivityRecords& records, const std::vector<ForwardWindow>& forwards,
                             const std::optional<ArchLimits>& arch, int sm_count);

}  // namespace sdpa
