// The host side of the counter pass: the chip's name, the metrics it offers of those sdpa-prof
// reads, the config image built from them once per run, and the evaluation of a decoded counter
// data image into values. The range profiler that fills the image is CounterSession's.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "profile/counter_ranges.h"
#include "profile/cupti_library.h"

namespace sdpa {

// A CUPTI call while the counter pass is set up: false, with one sentence in `why_not`, when it
// failed; where the counters are not ours to read, the sentence says what to do about it.
bool counter_call_ok(CUptiResult result, const char* call, std::string& why_not);

class CounterConfig {
 public:
  // nullptr, with one sentence in `why_not`, when the profiler host cannot start, the chip is one
  // CUPTI does not know or offers none of the metrics.
  static std::unique_ptr<CounterConfig> create(const CuptiProfilerApi& api, int device,
                                               CUcontext context, std::string& why_not);
  ~CounterConfig();
  CounterConfig(const CounterConfig&) = delete;
  CounterConfig& operator=(const CounterConfig&) = delete;

  const std::string& chip() const { return chip_; }
  const std::vector<std::string>& metrics() const { return metrics_; }  // what each range reads
  // metrics() as CUPTI's parameter structs take them, pointing into metrics().
  std::vector<const char*> metric_names() const;
  const std::vector<std::string>& unavailable() const { return unavailable_; }
  const std::vector<uint8_t>& image() const { return image_; }
  int passes() const { return passes_; }

  // The values of the first `ranges` ranges of a decoded counter data image, in metrics() order.
  // Throws ApiError when a CUPTI call fails.
  std::vector<RangeValues> evaluate(const std::vector<uint8_t>& counter_data,
                                    std::size_t ranges) const;

 private:
  explicit CounterConfig(const CuptiProfilerApi& api) : api_(api) {}
  bool open_host(int device, CUcontext context, std::string& why_not);
  bool select_metrics(std::string& why_not);
  bool build_image(std::string& why_not);

  const CuptiProfilerApi& api_;
  std::string chip_;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  std::vector<std::string> metrics_;
  std::vector<std::string> unavailable_;
  std::vector<uint8_t> image_;
  int passes_ = 0;
};

}  // namespace sdpa
