// Power, temperature, SM clock and clock-event reasons while a case's timing samples run: NVML is
// read on a thread of its own every few milliseconds (so that readings fall while the GPU works,
// not between samples), and the energy counter is read at both ends.
#pragma once

#include <chrono>
#include <stop_token>
#include <thread>
#include <vector>

#include "gpu/nvml.h"
#include "model/clocks.h"

namespace sdpa {

class PowerMonitor {
 public:
  static constexpr std::chrono::milliseconds kPeriod{10};

  explicit PowerMonitor(const Nvml& nvml);  // starts reading
  ~PowerMonitor();
  PowerMonitor(const PowerMonitor&) = delete;
  PowerMonitor& operator=(const PowerMonitor&) = delete;

  // Stops reading and summarizes what was read.
  PowerSummary finish();

 private:
  void poll(std::stop_token stop);

  const Nvml& nvml_;
  std::optional<double> energy_start_j_;
  std::chrono::steady_clock::time_point started_;
  std::vector<Nvml::Reading> readings_;  // written by the thread only until it is joined
  std::jthread thread_;
};

// The summary of a window's readings; `energy_j` (joules used over `seconds`) gives the mean power
// when known, else the mean of the power readings does. GPU idle is left out of the reasons.
PowerSummary summarize_power(const std::vector<Nvml::Reading>& readings,
                             std::optional<double> energy_j, double seconds,
                             std::optional<double> limit_w);

}  // namespace sdpa
