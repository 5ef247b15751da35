// Runs a sweep: per problem, fresh random inputs and one reference; per backend (or each of its
// variants), prepare, verify against the reference, profile (when a CUPTI session is given), then
// time, and measure the host cost. Every case ends ok, skipped or failed with a reason.
#pragma once

#include <cstddef>
#include <functional>
#include <unordered_set>
#include <vector>

#include "backends/backend.h"
#include "measure/timing.h"
#include "profile/counter_session.h"
#include "profile/cupti_session.h"
#include "model/case_key.h"
#include "model/result.h"

namespace sdpa {

// The reference's scratch: one row of scores per query row in flight, capped at 256 MB.
int64_t reference_scratch_floats(const Problem& problem);

// Device memory a problem needs whatever the backend: Q, K, V, O, the reference output, the
// reference's scratch, and a paged problem's page pools and block table.
std::size_t shared_case_bytes(const Problem& problem);
// The whole need of one case, predicted before it runs.
std::size_t predicted_case_bytes(const Problem& problem, const BackendEntry& backend);

struct SweepPlan {
  std::vector<Problem> problems;
  std::vector<BackendChoice> backends;
  // The cases this run holds, problem-major (problem i, choice j at i * backends.size() + j);
  // empty: every one. --shard leaves the other shards' out.
  std::vector<bool> selected{};
  // Cases measured already (--resume), by case_key: not run again, not reported again.
  std::unordered_set<CaseKey, CaseKeyHash> done{};

  bool holds(std::size_t problem, std::size_t choice) const {
    return selected.empty() || selected[problem * backends.size() + choice];
  }
  // Held here and not done already; a choice of every variant is also asked per variant.
  bool left_to_run(std::size_t problem, std::size_t choice) const;
  // The cases this run will run, a choice of every variant counted once.
  std::size_t case_count() const;
};

// Called after each case with its result, for progress output.
using CaseCallback = std::function<void(const CaseResult&)>;
// Called as a case starts: its backend's name and problem (a watchdog's clock starts here).
using CaseStartCallback = std::function<void(const std::string& backend, const Problem& problem)>;

// The cases that ran, and why the sweep ended before the last one ("interrupted", "the GPU
// context is unusable after ..."): empty when it ran to the end.
struct SweepResult {
  std::vector<CaseResult> cases;
  std::string stopped_because;
};

// Called after a profiled case with what its profile pass recorded (for the timeline).
using CaseRecordsCallback = std::function<void(const CaseResult&, ActivityRecords&&)>;

// Forwards in a case's profile pass.
inline constexpr int kProfileForwards = 3;
// Back-to-back calls over which the host cost per call is averaged.
inline constexpr int kHostCostCalls = 10;

// What a sweep says as it goes; any hook may be empty.
struct SweepHooks {
  CaseStartCallback on_start;
  CaseCallback on_case;
  CaseRecordsCallback on_records;
};

// The optional passes of each case, beside verification and timing: the profile pass (CUPTI),
// and with it the counter pass.
struct SweepPasses {
  CuptiSession* profiler = nullptr;
  CounterSession* counters = nullptr;
};

// `timing.stop_requested` is also asked between cases: when it says stop, the sweep ends after
// the current sample. A failure that leaves the GPU usable (out of memory, a backend's error)
// fails its case and the sweep goes on; one that poisons the context (an illegal address) ends it
// with the cases so far.
SweepResult run_sweep(const SweepPlan& plan, const DeviceInfo& device, uint64_t seed,
                      const TimingOptions& timing, const SweepHooks& hooks = {},
                      const SweepPasses& passes = {});

}  // namespace sdpa
