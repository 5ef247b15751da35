#include "profile/counter_config.h"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "profile/counter_metrics.h"
#include "profile/crash_probe.h"
#include "profile/cupti_check.h"

namespace sdpa {
namespace {

constexpr int kProbeTimeoutMs = 30'000;  // the configuration takes well under a second

// What to do about a CUPTI result that says counters are not ours to read; empty for others.
std::string not_permitted(CUptiResult r) {
  switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "no permission to read GPU performance counters "
             "(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): run as root or "
             "load the driver with NVreg_RestrictProfilingToAdminUsers=0 (e.g. `options nvidia "
             "NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d, then reboot)";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      return fmt::format(
          "another profiler holds the GPU's counters ({}): run sdpa-prof outside Nsight Compute or "
          "Nsight Systems' GPU metrics, or pass --no-counters",
          cupti_result_text(r));
    default:
      return {};
  }
}

}  // namespace

bool counter_call_ok(CUptiResult r, const char* call, std::string& why_not) {
  if (r == CUPTI_SUCCESS) return true;
  why_not = not_permitted(r);
  if (why_not.empty()) why_not = fmt::format("{} failed: {}", call, cupti_result_text(r));
  return false;
}

std::unique_ptr<CounterConfig> CounterConfig::create(const CuptiProfilerApi& api, int device,
                                                     CUcontext context, std::string& why_not) {
  std::unique_ptr<CounterConfig> c(new CounterConfig(api));
  if (!c->open_host(device, context, why_not)) return nullptr;
  // Host-only calls, tried in a child first: a crash there costs the counters, not the sweep.
  const std::optional<std::string> death = dies_in_a_child(
      [&] {
        std::string ignored;
        if (c->select_metrics(ignored)) c->build_image(ignored);
      },
      kProbeTimeoutMs);
  if (death) {
    why_not = fmt::format("CUPTI's metric configuration for {} {} in a probe process (libnvperf_host)", c->chip_,
                          *death);
    return nullptr;
  }
  if (!c->select_metrics(why_not) || !c->build_image(why_not)) return nullptr;
  return c;
}

CounterConfig::~CounterConfig() {
  if (host_ == nullptr) return;
  auto p = cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(
      CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  (void)api_.cuptiProfilerHostDeinitialize(&p);  // nothing to do about a failure at exit
}

// The profiler, the chip's name, and the host object for the counters this context can read.
bool CounterConfig::open_host(int device, CUcontext context, std::string& why_not) {
  auto init =
      cupti_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  if (!counter_call_ok(api_.cuptiProfilerInitialize(&init), "cuptiProfilerInitialize", why_not))
    return false;
  auto chip =
      cupti_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = static_cast<std::size_t>(device);
  if (!counter_call_ok(api_.cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName", why_not))
    return false;
  chip_ = chip.pChipName != nullptr ? chip.pChipName : "";

  auto avail = cupti_params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.ctx = context;
  if (!counter_call_ok(api_.cuptiProfilerGetCounterAvailability(&avail),
                       "cuptiProfilerGetCounterAvailability", why_not))
    return false;
  if (avail.counterAvailabilityImageSize == 0) {
    why_not = "CUPTI reports no counter availability on this device (an empty availability image)";
    return false;
  }
  std::vector<uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  if (!counter_call_ok(api_.cuptiProfilerGetCounterAvailability(&avail),
                       "cuptiProfilerGetCounterAvailability", why_not))
    return false;

  auto host = cupti_params<CUpti_Profiler_Host_Initialize_Params>(
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = chip_.c_str();
  host.pCounterAvailabilityImage = availability.data();
  if (!counter_call_ok(api_.cuptiProfilerHostInitialize(&host), "cuptiProfilerHostInitialize",
                       why_not))
    return false;
  host_ = host.pHostObject;
  return true;
}

// The metrics of the per-chip table that this chip offers, down to their rollup and submetric.
bool CounterConfig::select_metrics(std::string& why_not) {
  std::set<std::string, std::less<>> base;
  for (const CUpti_MetricType type :
       {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
    auto list = cupti_params<CUpti_Profiler_Host_GetBaseMetrics_Params>(
        CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE);
    list.pHostObject = host_;
    list.metricType = type;
    if (!counter_call_ok(api_.cuptiProfilerHostGetBaseMetrics(&list),
                         "cuptiProfilerHostGetBaseMetrics", why_not))
      return false;
    for (std::size_t i = 0; i < list.numMetrics; ++i)
      if (list.ppMetricNames[i] != nullptr) base.insert(list.ppMetricNames[i]);
  }
  MetricChoice choice = choose_metrics(chip_, base);
  unavailable_ = std::move(choice.unavailable);
  for (const std::string& name : choice.metrics) {
    // The base metric is there; the rollup and submetric must be too.
    auto props = cupti_params<CUpti_Profiler_Host_GetMetricProperties_Params>(
        CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
    props.pHostObject = host_;
    props.pMetricName = name.c_str();
    if (api_.cuptiProfilerHostGetMetricProperties(&props) == CUPTI_SUCCESS)
      metrics_.push_back(name);
    else
      unavailable_.push_back(name);
  }
  if (metrics_.empty()) {
    why_not = fmt::format("{} offers none of the metrics sdpa-prof reads", chip_);
    return false;
  }
  return true;
}

// The config image of the chosen metrics, and the passes it takes.
bool CounterConfig::build_image(std::string& why_not) {
  std::vector<const char*> names = metric_names();
  auto add = cupti_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = host_;
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  if (!counter_call_ok(api_.cuptiProfilerHostConfigAddMetrics(&add),
                       "cuptiProfilerHostConfigAddMetrics", why_not))
    return false;
  auto size = cupti_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = host_;
  if (!counter_call_ok(api_.cuptiProfilerHostGetConfigImageSize(&size),
                       "cuptiProfilerHostGetConfigImageSize", why_not))
    return false;
  image_.resize(size.configImageSize);
  auto image = cupti_params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = host_;
  image.configImageSize = image_.size();
  image.pConfigImage = image_.data();
  if (!counter_call_ok(api_.cuptiProfilerHostGetConfigImage(&image),
                       "cuptiProfilerHostGetConfigImage", why_not))
    return false;
  auto passes = cupti_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes.configImageSize = image_.size();
  passes.pConfigImage = image_.data();
  if (!counter_call_ok(api_.cuptiProfilerHostGetNumOfPasses(&passes),
                       "cuptiProfilerHostGetNumOfPasses", why_not))
    return false;
  passes_ = static_cast<int>(passes.numOfPasses);
  return true;
}

std::vector<const char*> CounterConfig::metric_names() const {
  std::vector<const char*> names;
  for (const std::string& m : metrics_) names.push_back(m.c_str());
  return names;
}

std::vector<RangeValues> CounterConfig::evaluate(const std::vector<uint8_t>& counter_data,
                                                 std::size_t ranges) const {
  std::vector<const char*> names = metric_names();
  std::vector<RangeValues> out;
  for (std::size_t r = 0; r < ranges; ++r) {
    RangeValues values(names.size(), NAN);
    auto eval = cupti_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    eval.pHostObject = host_;
    eval.pCounterDataImage = counter_data.data();
    eval.counterDataImageSize = counter_data.size();
    eval.rangeIndex = r;
    eval.ppMetricNames = names.data();
    eval.numMetrics = names.size();
    eval.pMetricValues = values.data();
    SDPA_CHECK_CUPTI(api_.cuptiProfilerHostEvaluateToGpuValues(&eval));
    out.push_back(std::move(values));
  }
  return out;
}

}  // namespace sdpa
