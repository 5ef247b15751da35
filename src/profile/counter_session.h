// Hardware counters per kernel through CUPTI's range profiler (auto range, user replay), over
// the config image CounterConfig builds once per run: each case's counter pass runs the forward
// once per pass the metrics need, each time after `before_pass` (emptying the L2, as Nsight
// Compute's --cache-control all does), apart from the activity and timing passes, and hands back
// the decoded values per kernel launch.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/counters.h"
#include "profile/counter_config.h"
#include "profile/counter_ranges.h"
#include "profile/cupti_library.h"

namespace sdpa {

class CounterSession {
 public:
  // nullptr, with one sentence in `why_not`, when counters cannot be read here: no range
  // profiler in libcupti, no permission (with the fix), another profiler holding the counters,
  // a chip CUPTI does not know.
  static std::unique_ptr<CounterSession> start(int device, std::string& why_not);
  CounterSession(const CounterSession&) = delete;
  CounterSession& operator=(const CounterSession&) = delete;

  // "CUPTI range profiler (auto range, user replay), API 130001, GH100: 8 metrics in 9 passes"
  std::string description() const;
  const std::vector<std::string>& metrics() const { return config_->metrics(); }
  CounterSource source() const;  // wall time and expected bytes left for the caller

  struct Readout {
    std::vector<RangeValues> ranges;  // one per kernel launch, in launch order
    double wall_ms = 0;               // the pass's host time, replays included
    int replays = 0;                  // forwards run
  };
  // The forward under the range profiler until every pass is in, with room for `max_ranges`
  // launches per forward. Throws ApiError when a CUPTI call fails; the range profiler is off
  // again either way.
  Readout measure(const std::function<void(cudaStream_t)>& forward,
                  const std::function<void(cudaStream_t)>& before_pass, cudaStream_t stream,
                  std::size_t max_ranges);

 private:
  CounterSession(const CuptiProfilerApi& api, uint32_t version, CUcontext context,
                 std::unique_ptr<CounterConfig> config);
  std::vector<uint8_t> counter_data(CUpti_RangeProfiler_Object* object, std::size_t ranges);
  void set_config(CUpti_RangeProfiler_Object* object, std::vector<uint8_t>& data,
                  std::size_t ranges);
  int run_passes(CUpti_RangeProfiler_Object* object,
                 const std::function<void(cudaStream_t)>& forward,
                 const std::function<void(cudaStream_t)>& before_pass, cudaStream_t stream);

  const CuptiProfilerApi& api_;
  uint32_t version_ = 0;
  CUcontext context_ = nullptr;
  std::unique_ptr<CounterConfig> config_;
};

}  // namespace sdpa
