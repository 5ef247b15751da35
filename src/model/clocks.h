// The clock a case ran at and why: NVML's power, temperature and clock-event reasons seen while
// its timing samples ran, and what follows from them (a finding, a marker, a time at the peak
// clock).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/profile.h"

namespace sdpa {

struct TimingStats;

// NVML's clock-event ("throttle") reason bits, as nvml.h numbers them.
enum ClockEventReason : uint64_t {
  kClockGpuIdle = 0x1,
  kClockApplicationsSetting = 0x2,
  kClockSwPowerCap = 0x4,
  kClockHwSlowdown = 0x8,
  kClockSyncBoost = 0x10,
  kClockSwThermal = 0x20,
  kClockHwThermal = 0x40,
  kClockHwPowerBrake = 0x80,
  kClockDisplaySetting = 0x100,
};

// Each set bit's id, in bit order: "sw_power_cap", "hw_slowdown", ... (unknown bits as "0x400").
std::vector<std::string> clock_reason_ids(uint64_t reasons);
// "software power cap, hardware slowdown" ("" when no bit is set).
std::string clock_reason_text(uint64_t reasons);

// What NVML read while a case's timing samples ran. A field is empty when NVML could not read it.
struct PowerSummary {
  std::optional<double> mean_w;     // energy counter over the sampling window (else mean reading)
  std::optional<double> highest_w;  // highest power reading (instant where the driver has it, else ~1 s averages)
  std::optional<double> limit_w;    // enforced power limit
  std::optional<double> temperature_c;  // highest GPU temperature read
  std::optional<double> sm_clock_mhz;   // median of NVML's SM clock readings (beside the probe's)
  std::optional<uint64_t> reasons;  // clock-event reasons seen (OR of the readings), idle left out
  int readings = 0;
};

// Whether NVML read power and clock-event reasons in a run, and why not when it did not.
struct PowerSource {
  bool enabled = false;
  std::string
      description;  // "NVML, driver 580.65.06, instant power (libnvidia-ml.so.1)", else why it is off
};

// A median SM clock under this fraction of the peak is named: a finding and a marker on the time.
inline constexpr double kLowClockFraction = 0.95;

// Median SM clock over the peak; 0 when either is unknown.
double clock_fraction(const TimingStats& t);
// The median time scaled to the peak SM clock: an estimate that holds for a compute-bound kernel
// (its time scales with the clock). 0 when the clocks are unknown.
double clock_normalized_ms(const TimingStats& t);
// One finding ("low-clock") when the median SM clock is under kLowClockFraction of the peak,
// naming the reason NVML gave: "power-limited: median SM clock 1690 MHz, 85% of the 1980 MHz peak;
// ...".
std::vector<Finding> clock_findings(const TimingStats& t);
// The table's mark on such a time: 'p' power cap, 't' thermal, 'h' hardware slowdown, 'c' another
// or unknown reason; '\0' when the clock is not low.
char clock_marker(const TimingStats& t);
// "SM 1690 MHz median, 85% of the 1980 MHz peak; 650 W mean, ...": for --kernels ("" without
// clocks).
std::string clock_text(const TimingStats& t);

}  // namespace sdpa
