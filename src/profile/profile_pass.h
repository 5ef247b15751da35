// The profile pass of one case, apart from the timing pass: a few forwards, each in its own NVTX
// range and recorded by CUPTI, then attributed, summarized and checked by the findings' rules.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>

#include "gpu/device_query.h"
#include "profile/cupti_session.h"
#include "model/result.h"

namespace sdpa {

// "sdpa-prof/naive/B8_H16_S1024_D64_bf16_causal": forward i's range adds "/fwd<i>".
std::string nvtx_range_prefix(const std::string& backend, const Problem& problem);

// Runs `forwards` forwards, each synchronized before the next, and profiles them; `records`,
// when given, receives what the pass recorded (for the timeline).
CaseProfile profile_forwards(CuptiSession& session, const std::function<void(cudaStream_t)>& forward,
                             cudaStream_t stream, const std::string& range_prefix, int forwards,
                             const DeviceInfo& device, ActivityRecords* records = nullptr);

}  // namespace sdpa
