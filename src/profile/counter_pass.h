// The counter pass of one case: the forward under the range profiler, once per pass, after the
// activity pass (whose launch order names the ranges) and after the timing pass (which it must
// not disturb). Never fails the case: what went wrong lands in profile.counters_skipped.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <optional>

#include "model/problem.h"
#include "model/profile.h"
#include "profile/counter_session.h"

namespace sdpa {

// Fills each kernel's counters, profile.counters and the counter findings; `before_pass` runs
// before each replay of the forward (the L2 flush of a cold-cache run). `expected_dram_bytes`:
// the backend's own count of the DRAM bytes its kernels move per forward, if it has one.
void count_forward(CounterSession& session, CaseProfile& profile,
                   const std::function<void(cudaStream_t)>& forward,
                   const std::function<void(cudaStream_t)>& before_pass, cudaStream_t stream,
                   const Problem& problem, int sm_count, std::optional<double> expected_dram_bytes);

}  // namespace sdpa
