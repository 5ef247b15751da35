#include "profile/counter_session.h"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "profile/cupti_check.h"
#include "profile/counter_metrics.h"
#include "profile/host_cost.h"

namespace sdpa {
namespace {

// A CUPTI parameter struct, zeroed, with its size set.
template <typename P>
P params(std::size_t struct_size) {
  P p{};
  p.structSize = struct_size;
  return p;
}

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

// A CUPTI call during start(): false, with the sentence, when it failed.
bool ok(CUptiResult r, const char* call, std::string& why_not) {
  if (r == CUPTI_SUCCESS) return true;
  why_not = not_permitted(r);
  if (why_not.empty()) why_not = fmt::format("{} failed: {}", call, cupti_result_text(r));
  return false;
}

// The runtime's current context, without linking the driver library.
bool current_context(CUcontext& context, std::string& why_not) {
  using GetCurrent = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaFree(nullptr) != cudaSuccess ||
      cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess || fn == nullptr) {
    why_not = "the CUDA driver's cuCtxGetCurrent could not be found";
    return false;
  }
  if (reinterpret_cast<GetCurrent>(fn)(&context) != CUDA_SUCCESS || context == nullptr) {
    why_not = "no current CUDA context";
    return false;
  }
  return true;
}

}  // namespace

CounterSession::CounterSession(const CuptiProfilerApi& api, uint32_t version, CUcontext context)
    : api_(api), version_(version), context_(context) {}

CounterSession::~CounterSession() {
  if (host_ == nullptr) return;
  auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(
      CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  (void)api_.cuptiProfilerHostDeinitialize(&p);  // nothing to do about a failure at exit
}

std::unique_ptr<CounterSession> CounterSession::start(int device, std::string& why_not) {
  std::string why;
  const CuptiApi* cupti = load_cupti(why);
  const CuptiProfilerApi* api = load_cupti_profiler(why);
  if (cupti == nullptr || api == nullptr) {
    why_not = why;
    return nullptr;
  }
  CUcontext context = nullptr;
  if (!current_context(context, why_not)) return nullptr;
  std::unique_ptr<CounterSession> s(new CounterSession(*api, cupti->version, context));

  auto init =
      params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  if (!ok(api->cuptiProfilerInitialize(&init), "cuptiProfilerInitialize", why_not)) return nullptr;
  auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = static_cast<std::size_t>(device);
  if (!ok(api->cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName", why_not)) return nullptr;
  s->chip_ = chip.pChipName != nullptr ? chip.pChipName : "";

  auto avail = params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.ctx = context;
  if (!ok(api->cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability",
          why_not))
    return nullptr;
  std::vector<uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  if (!ok(api->cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability",
          why_not))
    return nullptr;

  auto host = params<CUpti_Profiler_Host_Initialize_Params>(
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = s->chip_.c_str();
  host.pCounterAvailabilityImage = availability.data();
  if (!ok(api->cuptiProfilerHostInitialize(&host), "cuptiProfilerHostInitialize", why_not))
    return nullptr;
  s->host_ = host.pHostObject;

  std::set<std::string, std::less<>> base;
  for (const CUpti_MetricType type :
       {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
    auto list = params<CUpti_Profiler_Host_GetBaseMetrics_Params>(
        CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE);
    list.pHostObject = s->host_;
    list.metricType = type;
    if (!ok(api->cuptiProfilerHostGetBaseMetrics(&list), "cuptiProfilerHostGetBaseMetrics",
            why_not))
      return nullptr;
    for (std::size_t i = 0; i < list.numMetrics; ++i)
      if (list.ppMetricNames[i] != nullptr) base.insert(list.ppMetricNames[i]);
  }
  MetricChoice choice = choose_metrics(s->chip_, base);
  s->unavailable_ = std::move(choice.unavailable);
  for (const std::string& name : choice.metrics) {
    // The base metric is there; the rollup and submetric must be too.
    auto props = params<CUpti_Profiler_Host_GetMetricProperties_Params>(
        CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
    props.pHostObject = s->host_;
    props.pMetricName = name.c_str();
    if (api->cuptiProfilerHostGetMetricProperties(&props) == CUPTI_SUCCESS)
      s->metrics_.push_back(name);
    else
      s->unavailable_.push_back(name);
  }
  if (s->metrics_.empty()) {
    why_not = fmt::format("{} offers none of the metrics sdpa-prof reads", s->chip_);
    return nullptr;
  }

  std::vector<const char*> names;
  for (const std::string& m : s->metrics_) names.push_back(m.c_str());
  auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = s->host_;
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  if (!ok(api->cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics",
          why_not))
    return nullptr;
  auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = s->host_;
  if (!ok(api->cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize",
          why_not))
    return nullptr;
  s->config_.resize(size.configImageSize);
  auto image = params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = s->host_;
  image.configImageSize = s->config_.size();
  image.pConfigImage = s->config_.data();
  if (!ok(api->cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage", why_not))
    return nullptr;
  auto passes = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes.configImageSize = s->config_.size();
  passes.pConfigImage = s->config_.data();
  if (!ok(api->cuptiProfilerHostGetNumOfPasses(&passes), "cuptiProfilerHostGetNumOfPasses",
          why_not))
    return nullptr;
  s->passes_ = static_cast<int>(passes.numOfPasses);

  // Permission and a profiler holding the counters show here, once, rather than in every case.
  auto enable =
      params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = context;
  if (!ok(api->cuptiRangeProfilerEnable(&enable), "cuptiRangeProfilerEnable", why_not))
    return nullptr;
  auto disable =
      params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
  disable.pRangeProfilerObject = enable.pRangeProfilerObject;
  if (!ok(api->cuptiRangeProfilerDisable(&disable), "cuptiRangeProfilerDisable", why_not))
    return nullptr;
  return s;
}

std::string CounterSession::description() const {
  std::string text =
      fmt::format("{}, {}: {} metrics in {} passes", source().api, chip_, metrics_.size(), passes_);
  if (!unavailable_.empty())
    text += fmt::format("; not on this GPU: {}", fmt::join(unavailable_, ", "));
  return text;
}

CounterSource CounterSession::source() const {
  CounterSource s;
  s.api = fmt::format(
      "CUPTI range profiler (auto range, user replay, the L2 cleaned before each pass unless "
      "--hot), API {}",
      version_);
  s.chip = chip_;
  s.passes = passes_;
  s.unavailable = unavailable_;
  return s;
}

CounterSession::Readout CounterSession::measure(
    const std::function<void(cudaStream_t)>& forward,
    const std::function<void(cudaStream_t)>& before_pass, cudaStream_t stream,
    std::size_t max_ranges) {
  const HostStopwatch clock;
  SDPA_CHECK_CUDA(cudaStreamSynchronize(stream));
  auto enable =
      params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = context_;
  SDPA_CHECK_CUPTI(api_.cuptiRangeProfilerEnable(&enable));
  CUpti_RangeProfiler_Object* object = enable.pRangeProfilerObject;
  // Off again whatever happens below: the timing pass must run without it.
  struct Off {
    const CuptiProfilerApi& api;
    CUpti_RangeProfiler_Object* object;
    ~Off() {
      auto p = params<CUpti_RangeProfiler_Disable_Params>(
          CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = object;
      (void)api.cuptiRangeProfilerDisable(&p);
    }
  } off{api_, object};

  std::vector<const char*> names;
  for (const std::string& m : metrics_) names.push_back(m.c_str());
  const std::size_t ranges = std::max<std::size_t>(1, max_ranges);
  auto size = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = object;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = ranges;
  size.maxNumRangeTreeNodes = static_cast<uint32_t>(ranges);
  SDPA_CHECK_CUPTI(api_.cuptiRangeProfilerGetCounterDataSize(&size));
  std::vector<uint8_t> data(size.counterDataSize);
  auto init = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = object;
  init.counterDataSize = data.size();
  init.pCounterData = data.data();
  SDPA_CHECK_CUPTI(api_.cuptiRangeProfilerCounterDataImageInitialize(&init));

  auto config = params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  config.pRangeProfilerObject = object;
  config.configSize = config_.size();
  config.pConfig = config_.data();
  config.counterDataImageSize = data.size();
  config.pCounterDataImage = data.data();
  config.range = CUPTI_AutoRange;
  config.replayMode = CUPTI_UserReplay;
  config.maxRangesPerPass = ranges;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  SDPA_CHECK_CUPTI(api_.cuptiRangeProfilerSetConfig(&config));

  Readout out;
  // Each pass replays the whole forward; a few more tries than passes before giving up.
  for (bool all_in = false; !all_in;) {
    if (out.replays > passes_ + 2)
      throw_api_error("CUPTI", "cuptiRangeProfilerStop", __FILE__, __LINE__,
                      fmt::format("passes still unsubmitted after {} forwards", out.replays));
    before_pass(stream);  // outside Start/Stop: not a range of its own
    SDPA_CHECK_CUDA(cudaStreamSynchronize(stream));
    auto start =
        params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = object;
    SDPA_CHECK_CUPTI(api_.cuptiRangeProfilerStart(&start));
    forward(stream);
    ++out.replays;
    SDPA_CHECK_CUDA(cudaStreamSynchronize(stream));
    auto stop =
        params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = object;
    SDPA_CHECK_CUPTI(api_.cuptiRangeProfilerStop(&stop));
    all_in = stop.isAllPassSubmitted != 0;
  }
  auto decode = params<CUpti_RangeProfiler_DecodeData_Params>(
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = object;
  SDPA_CHECK_CUPTI(api_.cuptiRangeProfilerDecodeData(&decode));
  if (decode.numOfRangeDropped > 0)
    throw_api_error(
        "CUPTI", "cuptiRangeProfilerDecodeData", __FILE__, __LINE__,
        fmt::format("{} kernel ranges dropped (room for {})", decode.numOfRangeDropped, ranges));

  auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = data.data();
  info.counterDataImageSize = data.size();
  SDPA_CHECK_CUPTI(api_.cuptiRangeProfilerGetCounterDataInfo(&info));
  for (std::size_t r = 0; r < info.numTotalRanges; ++r) {
    RangeValues values(names.size(), NAN);
    auto eval = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    eval.pHostObject = host_;
    eval.pCounterDataImage = data.data();
    eval.counterDataImageSize = data.size();
    eval.rangeIndex = r;
    eval.ppMetricNames = names.data();
    eval.numMetrics = names.size();
    eval.pMetricValues = values.data();
    SDPA_CHECK_CUPTI(api_.cuptiProfilerHostEvaluateToGpuValues(&eval));
    out.ranges.push_back(std::move(values));
  }
  out.wall_ms = clock.elapsed_us() / 1e3;
  return out;
}

}  // namespace sdpa
