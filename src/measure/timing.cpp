#include "measure/timing.h"

#include <chrono>
#include <optional>

#include "gpu/check.h"
#include "clock_probe.h"
#include "gpu/device_buffer.h"
#include "measure/l2_flush.h"
#include "measure/power_monitor.h"

namespace sdpa {
namespace {

constexpr long long kProbeCycles = 20000;  // ~10 us at 2 GHz

}  // namespace

TimingStats timing_from_samples(std::vector<double> samples_ms, const TimingOptions& options) {
  const SampleStats s = summarize(samples_ms);
  TimingStats t;
  t.warmup = options.warmup;
  t.samples = s.count;
  t.median_ms = s.median;
  t.min_ms = s.min;
  t.max_ms = s.max;
  t.mean_ms = s.mean;
  t.q1_ms = s.q1;
  t.q3_ms = s.q3;
  t.relative_spread = s.relative_spread;
  t.cold_cache = !options.hot;
  t.samples_ms = std::move(samples_ms);
  return t;
}

TimingStats collect_samples(const std::function<TimedSample()>& take, const TimingOptions& options,
                            double peak_clock_mhz) {
  const double min_clock_mhz = options.throttle_fraction * peak_clock_mhz;
  std::vector<double> kept;
  std::vector<double> clocks;
  std::vector<double> throttled;
  std::vector<double> throttled_clocks;
  const auto began = std::chrono::steady_clock::now();
  StopDecision decision = StopDecision::keep_going;
  bool interrupted = false;
  while (decision == StopDecision::keep_going) {
    const TimedSample sample = take();
    if (sample.sm_clock_mhz > 0 && sample.sm_clock_mhz < min_clock_mhz) {
      throttled.push_back(sample.ms);
      throttled_clocks.push_back(sample.sm_clock_mhz);
    } else {
      kept.push_back(sample.ms);
      clocks.push_back(sample.sm_clock_mhz);
    }
    const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    decision = kept.empty() ? (elapsed_s >= options.stopping.timeout_s ? StopDecision::timed_out : StopDecision::keep_going)
                            : should_stop(options.stopping, kept, elapsed_s);
    if (decision == StopDecision::keep_going && options.stop_requested && options.stop_requested()) {
      decision = StopDecision::timed_out;
      interrupted = true;
    }
  }
  // Every sample throttled: its times are all there is. They are reported, never as converged,
  // with their clocks, so that the low-clock finding and marker show and compare distrusts them.
  const bool all_throttled = kept.empty();
  TimingStats t = timing_from_samples(all_throttled ? throttled : kept, options);
  t.converged = decision == StopDecision::converged && !all_throttled;
  t.interrupted = interrupted;
  t.all_throttled = all_throttled;
  t.throttled_dropped = all_throttled ? 0 : static_cast<int>(throttled.size());
  const std::vector<double>& kept_clocks = all_throttled ? throttled_clocks : clocks;
  t.sm_clock_mhz = kept_clocks.empty() ? 0.0 : summarize(kept_clocks).median;
  t.sm_clock_peak_mhz = peak_clock_mhz;
  return t;
}

TimingStats time_forward(const std::function<void(cudaStream_t)>& forward, cudaStream_t stream,
                         const TimingOptions& options, const DeviceInfo& device) {
  for (int i = 0; i < options.warmup; ++i) forward(stream);
  SDPA_CHECK_CUDA(cudaStreamSynchronize(stream));

  std::optional<L2Flush> l2;
  if (!options.hot) l2.emplace(device.l2_bytes);
  DeviceBuffer probe(sizeof(ClockProbe));
  CudaEvent start;
  CudaEvent stop;
  std::optional<PowerMonitor> power;
  if (options.nvml != nullptr) power.emplace(*options.nvml);
  const auto take = [&] {
    if (l2) l2->flush(stream);
    SDPA_CHECK_CUDA(launch_clock_probe(probe.as<ClockProbe>(), kProbeCycles, stream));
    SDPA_CHECK_CUDA(cudaEventRecord(start.get(), stream));
    forward(stream);
    SDPA_CHECK_CUDA(cudaEventRecord(stop.get(), stream));
    SDPA_CHECK_CUDA(cudaEventSynchronize(stop.get()));
    float ms = 0.f;
    SDPA_CHECK_CUDA(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    ClockProbe clock{};
    SDPA_CHECK_CUDA(cudaMemcpy(&clock, probe.get(), sizeof(clock), cudaMemcpyDeviceToHost));
    const double mhz = clock.nanoseconds > 0 ? 1e3 * static_cast<double>(clock.cycles) / static_cast<double>(clock.nanoseconds) : 0.0;
    return TimedSample{ms, mhz};
  };
  TimingStats t = collect_samples(take, options, device.sm_clock_khz / 1000.0);
  if (power) t.power = power->finish();
  return t;
}

}  // namespace sdpa
