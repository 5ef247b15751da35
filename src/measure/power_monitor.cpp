#include "measure/power_monitor.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>

namespace sdpa {

PowerMonitor::PowerMonitor(const Nvml& nvml)
    : nvml_(nvml),
      energy_start_j_(nvml.energy_j()),
      started_(std::chrono::steady_clock::now()),
      thread_([this](std::stop_token stop) { poll(stop); }) {}

PowerMonitor::~PowerMonitor() = default;  // the jthread asks the poll to stop and joins it

void PowerMonitor::poll(std::stop_token stop) {
  std::mutex mutex;
  std::condition_variable_any wake;
  std::unique_lock lock(mutex);
  while (!stop.stop_requested()) {
    readings_.push_back(nvml_.read());
    wake.wait_for(lock, stop, kPeriod, [] { return false; });  // sleeps the period, wakes on stop
  }
}

PowerSummary PowerMonitor::finish() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  std::optional<double> energy;
  if (const std::optional<double> end = nvml_.energy_j();
      end && energy_start_j_ && *end > *energy_start_j_)
    energy = *end - *energy_start_j_;
  return summarize_power(readings_, energy, seconds, nvml_.power_limit_w());
}

PowerSummary summarize_power(const std::vector<Nvml::Reading>& readings,
                             std::optional<double> energy_j, double seconds,
                             std::optional<double> limit_w) {
  PowerSummary s;
  s.readings = static_cast<int>(readings.size());
  s.limit_w = limit_w;
  double power_sum = 0;
  int power_count = 0;
  std::vector<double> clocks;
  for (const Nvml::Reading& r : readings) {
    if (r.power_w) {
      power_sum += *r.power_w;
      ++power_count;
      s.highest_w = std::max(s.highest_w.value_or(0.0), *r.power_w);
    }
    if (r.temperature_c)
      s.temperature_c = std::max(s.temperature_c.value_or(0.0), *r.temperature_c);
    if (r.sm_clock_mhz) clocks.push_back(*r.sm_clock_mhz);
    if (r.reasons) s.reasons = s.reasons.value_or(0) | (*r.reasons & ~uint64_t{kClockGpuIdle});
  }
  if (energy_j && seconds > 0) {
    s.mean_w = *energy_j / seconds;
  } else if (power_count > 0) {
    s.mean_w = power_sum / power_count;
  }
  if (!clocks.empty()) {
    std::sort(clocks.begin(), clocks.end());
    s.sm_clock_mhz = clocks[clocks.size() / 2];
  }
  return s;
}

}  // namespace sdpa
