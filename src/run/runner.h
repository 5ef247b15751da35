// Runs a sweep: per problem, fresh random inputs and one reference; per backend (or each of its
// variants), prepare, verify against the reference, profile (when a CUPTI session is given), then
// time, and measure the host cost. Every case ends ok, skipped or failed with a reason.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "backends/backend.h"
#include "measure/timing.h"
#include "profile/cupti_session.h"
#include "model/result.h"

namespace sdpa {

// The reference's scratch: one row of scores per query row in flight, capped at 256 MB.
int64_t reference_scratch_floats(const Problem& problem);

// Device memory a problem needs whatever the backend: Q, K, V, O, the reference output and
// the reference's scratch.
std::size_t shared_case_bytes(const Problem& problem);
// The whole need of one case, predicted before it runs.
std::size_t predicted_case_bytes(const Problem& problem, const BackendEntry& backend);

struct SweepPlan {
  std::vector<Problem> problems;
  std::vector<BackendChoice> backends;
};

// Called after each case with its result, for progress output.
using CaseCallback = std::function<void(const CaseResult&)>;

// Forwards in a case's profile pass.
inline constexpr int kProfileForwards = 3;
// Back-to-back calls over which the host cost per call is averaged.
inline constexpr int kHostCostCalls = 10;

// `profiler` null: no profile pass (timing and host cost only).
std::vector<CaseResult> run_sweep(const SweepPlan& plan, const DeviceInfo& device, uint64_t seed,
                                  const TimingOptions& timing, const CaseCallback& on_case,
                                  CuptiSession* profiler = nullptr);

}  // namespace sdpa
