// What a run measures with, opened once and said once: the device, NVML, CUPTI's activity pass,
// the range profiler's counter pass, the ceilings, and the Environment that records each of them
// in the results. `run` opens all of it; `trace` and `--with-torch` use its pieces.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>

#include "gpu/nvml.h"
#include "model/result.h"
#include "profile/counter_session.h"
#include "profile/cupti_session.h"

namespace sdpa {

struct CliOptions;

struct RunContext {
  DeviceInfo device;
  std::unique_ptr<Nvml> nvml;                 // null: no power, temperature or clock-event reasons
  std::unique_ptr<CuptiSession> profiler;     // null: --no-profile, or CUPTI cannot record here
  std::unique_ptr<CounterSession> counters;   // null: --no-counters, or no range profiler here
  Environment environment;
};

// The environment of any result this invocation writes: tool, command line, host, start time.
Environment new_environment(const CliOptions& o, std::optional<DeviceInfo> device, uint64_t seed);

// Opens what `o` asks for, saying on `progress` what each is or why it is off; the sweep goes on
// without NVML, CUPTI or counters. Null after saying why when the device cannot be used.
std::unique_ptr<RunContext> open_run_context(const CliOptions& o, uint64_t seed, std::ostream& progress);

}  // namespace sdpa
