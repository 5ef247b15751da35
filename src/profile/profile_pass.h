// The profile pass of one case, apart from the timing pass: a few calls, each in its own NVTX
// range and recorded by CUPTI, then attributed and summarized (the findings' rules, which name
// the pass, are the caller's to run).
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>

#include "gpu/device_query.h"
#include "profile/cupti_session.h"
#include "model/result.h"

namespace sdpa {

// Runs `forwards` forwards, each synchronized before the next and forward i in the NVTX range
// "<prefix>/fwd<i>" (prefix: range_prefix() of model/range_name.h), and profiles them; `records`,
// when given, receives what the pass recorded (for the timeline).
CaseProfile profile_forwards(CuptiSession& session, const std::function<void(cudaStream_t)>& forward,
                             cudaStream_t stream, const std::string& prefix, int forwards,
                             const DeviceInfo& device, ActivityRecords* records = nullptr);

}  // namespace sdpa
