// GPU time of one forward, measured as nvbench does: warm-up; before each sample the L2 is
// flushed (unless hot) and the SM clock is read; CUDA events around the forward; samples until
// the median's relative spread falls under the noise target or the time budget runs out. NVML,
// when open, is read meanwhile: power, temperature and why the clock is held down.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "gpu/device_query.h"
#include "gpu/nvml.h"
#include "measure/sample_stats.h"
#include "model/result.h"

namespace sdpa {

struct TimingOptions {
  int warmup = 3;
  bool hot = false;
  StoppingRule stopping;
  // Samples taken while the SM clock is under this fraction of the device's peak clock are
  // dropped (nvbench's default threshold); the clocks themselves are never changed.
  double throttle_fraction = 0.75;
  // Asked after each sample: true ends sampling there (an interrupt); the samples so far stand.
  std::function<bool()> stop_requested;
  // When NVML is open: power, temperature and clock-event reasons are read while the samples run.
  const Nvml* nvml = nullptr;
};

// One timed sample: the forward's GPU time, and the SM clock read just before it (0: unknown).
struct TimedSample {
  double ms = 0;
  double sm_clock_mhz = 0;
};

// The sampling loop of time_forward over any source of samples: samples under the throttle
// threshold of `peak_clock_mhz` are dropped and counted; when every sample ran throttled they
// are the case's times, marked all_throttled and never converged.
TimingStats collect_samples(const std::function<TimedSample()>& take, const TimingOptions& options,
                            double peak_clock_mhz);

TimingStats time_forward(const std::function<void(cudaStream_t)>& forward, cudaStream_t stream,
                         const TimingOptions& options, const DeviceInfo& device);

// The statistics of kept samples (at least one) in milliseconds.
TimingStats timing_from_samples(std::vector<double> samples_ms, const TimingOptions& options);

}  // namespace sdpa
