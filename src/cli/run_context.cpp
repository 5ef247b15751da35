#include "cli/run_context.h"

#include <unistd.h>

#include <string>

#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/crash_report.h"
#include "cli/version.h"
#include "gpu/attached_tool.h"
#include "gpu/device_query.h"
#include "io/ceilings_file.h"
#include "io/time_text.h"
#include "measure/ceilings.h"
#include "model/device.h"

namespace sdpa {
namespace {

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof(name) - 1) == 0 ? name : "";
}

// The cache's ceilings, else measured once and cached. None while a profiler or sanitizer is
// attached and nothing is cached: under it they would take long (a sanitizer instruments every
// GEMM, ncu may profile each) and measure the tool, not the GPU.
std::optional<Ceilings> cached_or_measured_ceilings(const DeviceInfo& device,
                                                    std::ostream& progress) {
  if (std::optional<Ceilings> cached = load_cached_ceilings(device, ceilings_method()))
    return cached;
  const std::string tool = attached_gpu_tool();
  if (!tool.empty()) {
    progress << fmt::format(
        "ceilings: none cached, and not measured while {} is attached; `sdpa-prof ceilings` "
        "run once without it caches them for every later run\n",
        tool);
    return std::nullopt;
  }
  return measure_and_cache_ceilings(device, tool, progress);
}

void open_profilers(const CliOptions& o, RunContext& context, std::ostream& progress) {
  Profiler& profiler = context.environment.profiler;
  if (o.profile) {
    const CrashStage stage("starting the CUPTI activity profiler");
    context.profiler = CuptiSession::start(profiler.description);
    if (context.profiler) profiler = Profiler{true, context.profiler->description()};
  } else {
    profiler.description = "--no-profile";
  }
  progress << fmt::format("profile: {}{}\n", profiler.enabled ? "" : "off, timing only: ", profiler.description);
  Profiler& counters = context.environment.counters;
  if (o.config.counters && context.profiler) {
    const CrashStage stage("starting the counter session (CUPTI range profiler; --no-counters runs without it)");
    context.counters = CounterSession::start(o.device, counters.description);
    if (context.counters) counters = Profiler{true, context.counters->description()};
  } else {
    counters.description = o.config.counters ? "they need the profile pass" : "--no-counters";
  }
  progress << fmt::format("counters: {}{}\n", counters.enabled ? "" : "off, the sweep goes on without them: ",
                          counters.description);
}

}  // namespace

Environment new_environment(const CliOptions& o, std::optional<DeviceInfo> device, uint64_t seed) {
  Environment e;
  e.tool_version = kToolVersion;
  e.git_sha = kGitSha;
  e.command_line = o.command_line;
  e.hostname = host_name();
  e.started_at = utc_now_iso8601();
  e.seed = seed;
  e.device = std::move(device);
  return e;
}

std::unique_ptr<RunContext> open_run_context(const CliOptions& o, uint64_t seed, std::ostream& progress) {
  auto context = std::make_unique<RunContext>();
  DeviceInfo& device = context->device;
  if (std::string error; !query_device(o.device, device, error)) {
    progress << "sdpa-prof: " << error << "\n";
    return nullptr;
  }
  std::string nvml_why;
  context->nvml = Nvml::open(device.uuid, nvml_why);
  if (context->nvml && device.sm_clock_khz == 0)  // the runtime did not say: NVML's peak is the same figure
    device.sm_clock_khz = static_cast<int>(1000 * context->nvml->max_sm_clock_mhz().value_or(0));
  Environment& e = context->environment;
  e = new_environment(o, device, seed);
  progress << fmt::format("{} ({} SMs, {}), driver {}, CUDA runtime {}, seed {}\n", device.name, device.sm_count,
                          gib_text(device.total_memory), version_text(device.driver_version),
                          version_text(device.runtime_version), e.seed);
  open_profilers(o, *context, progress);
  e.power = context->nvml ? PowerSource{true, context->nvml->description()} : PowerSource{false, nvml_why};
  progress << (context->nvml ? fmt::format("power: {}\n", context->nvml->description())
                             : fmt::format("power: off: {}; SM clocks are still measured, but not power, "
                                           "temperature or why the clock drops\n",
                                           nvml_why));
  e.ceilings = cached_or_measured_ceilings(device, progress);
  return context;
}

}  // namespace sdpa
