#include "profile/counter_session.h"

#include <algorithm>

#include <fmt/format.h>

#include "profile/cupti_check.h"
#include "profile/host_cost.h"

namespace sdpa {
namespace {

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

// The range profiler on and off again: false, with the sentence, when it cannot start here.
bool range_profiler_starts(const CuptiProfilerApi& api, CUcontext context, std::string& why_not) {
  auto enable = cupti_params<CUpti_RangeProfiler_Enable_Params>(
      CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = context;
  if (!counter_call_ok(api.cuptiRangeProfilerEnable(&enable), "cuptiRangeProfilerEnable", why_not))
    return false;
  auto disable = cupti_params<CUpti_RangeProfiler_Disable_Params>(
      CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
  disable.pRangeProfilerObject = enable.pRangeProfilerObject;
  return counter_call_ok(api.cuptiRangeProfilerDisable(&disable), "cuptiRangeProfilerDisable",
                         why_not);
}

}  // namespace

CounterSession::CounterSession(const CuptiProfilerApi& api, uint32_t version, CUcontext context,
                               std::unique_ptr<CounterConfig> config)
    : api_(api), version_(version), context_(context), config_(std::move(config)) {}

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
  std::unique_ptr<CounterConfig> config = CounterConfig::create(*api, device, context, why_not);
  if (config == nullptr) return nullptr;
  // Permission and a profiler holding the counters show here, once, rather than in every case.
  if (!range_profiler_starts(*api, context, why_not)) return nullptr;
  return std::unique_ptr<CounterSession>(
      new CounterSession(*api, cupti->version, context, std::move(config)));
}

std::string CounterSession::description() const {
  std::string text = fmt::format("{}, {}: {} metrics in {} passes", source().api, config_->chip(),
                                 config_->metrics().size(), config_->passes());
  if (!config_->unavailable().empty())
    text += fmt::format("; not on this GPU: {}", fmt::join(config_->unavailable(), ", "));
  return text;
}

CounterSource CounterSession::source() const {
  CounterSource s;
  s.api = fmt::format(
      "CUPTI range profiler (auto range, user replay, the L2 cleaned before each pass unless "
      "--hot), API {}",
      version_);
  s.chip = config_->chip();
  s.passes = config_->passes();
  s.unavailable = config_->unavailable();
  return s;
}

// A counter data image with room for `ranges` ranges of the config's metrics.
std::vector<uint8_t> CounterSession::counter_data(CUpti_RangeProfiler_Object* object,
                                                  std::size_t ranges) {
  std::vector<const char*> names = config_->metric_names();
  auto size = cupti_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = object;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = ranges;
  size.maxNumRangeTreeNodes = static_cast<uint32_t>(ranges);
  SDPA_CHECK_CUPTI(api_.cuptiRangeProfilerGetCounterDataSize(&size));
  std::vector<uint8_t> data(size.counterDataSize);
  auto init = cupti_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = object;
  init.counterDataSize = data.size();
  init.pCounterData = data.data();
  SDPA_CHECK_CUPTI(api_.cuptiRangeProfilerCounterDataImageInitialize(&init));
  return data;
}

void CounterSession::set_config(CUpti_RangeProfiler_Object* object, std::vector<uint8_t>& data,
                                std::size_t ranges) {
  auto config = cupti_params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  config.pRangeProfilerObject = object;
  config.configSize = config_->image().size();
  config.pConfig = config_->image().data();
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
}

// The forward once per pass until every pass is in; the number of forwards run.
int CounterSession::run_passes(CUpti_RangeProfiler_Object* object,
                               const std::function<void(cudaStream_t)>& forward,
                               const std::function<void(cudaStream_t)>& before_pass,
                               cudaStream_t stream) {
  int replays = 0;
  // Each pass replays the whole forward; a few more tries than passes before giving up.
  for (bool all_in = false; !all_in;) {
    if (replays > config_->passes() + 2)
      throw_api_error("CUPTI", "cuptiRangeProfilerStop", __FILE__, __LINE__,
                      fmt::format("passes still unsubmitted after {} forwards", replays));
    before_pass(stream);  // outside Start/Stop: not a range of its own
    SDPA_CHECK_CUDA(cudaStreamSynchronize(stream));
    auto start = cupti_params<CUpti_RangeProfiler_Start_Params>(
        CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = object;
    SDPA_CHECK_CUPTI(api_.cuptiRangeProfilerStart(&start));
    forward(stream);
    ++replays;
    SDPA_CHECK_CUDA(cudaStreamSynchronize(stream));
    auto stop =
        cupti_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = object;
    SDPA_CHECK_CUPTI(api_.cuptiRangeProfilerStop(&stop));
    all_in = stop.isAllPassSubmitted != 0;
  }
  return replays;
}

CounterSession::Readout CounterSession::measure(
    const std::function<void(cudaStream_t)>& forward,
    const std::function<void(cudaStream_t)>& before_pass, cudaStream_t stream,
    std::size_t max_ranges) {
  const HostStopwatch clock;
  SDPA_CHECK_CUDA(cudaStreamSynchronize(stream));
  auto enable = cupti_params<CUpti_RangeProfiler_Enable_Params>(
      CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = context_;
  SDPA_CHECK_CUPTI(api_.cuptiRangeProfilerEnable(&enable));
  CUpti_RangeProfiler_Object* object = enable.pRangeProfilerObject;
  // Off again whatever happens below: the timing pass must run without it.
  struct Off {
    const CuptiProfilerApi& api;
    CUpti_RangeProfiler_Object* object;
    ~Off() {
      auto p = cupti_params<CUpti_RangeProfiler_Disable_Params>(
          CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = object;
      (void)api.cuptiRangeProfilerDisable(&p);
    }
  } off{api_, object};

  const std::size_t ranges = std::max<std::size_t>(1, max_ranges);
  std::vector<uint8_t> data = counter_data(object, ranges);
  set_config(object, data, ranges);
  Readout out;
  out.replays = run_passes(object, forward, before_pass, stream);
  auto decode = cupti_params<CUpti_RangeProfiler_DecodeData_Params>(
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = object;
  SDPA_CHECK_CUPTI(api_.cuptiRangeProfilerDecodeData(&decode));
  if (decode.numOfRangeDropped > 0)
    throw_api_error(
        "CUPTI", "cuptiRangeProfilerDecodeData", __FILE__, __LINE__,
        fmt::format("{} kernel ranges dropped (room for {})", decode.numOfRangeDropped, ranges));

  auto info = cupti_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = data.data();
  info.counterDataImageSize = data.size();
  SDPA_CHECK_CUPTI(api_.cuptiRangeProfilerGetCounterDataInfo(&info));
  out.ranges = config_->evaluate(data, info.numTotalRanges);
  out.wall_ms = clock.elapsed_us() / 1e3;
  return out;
}

}  // namespace sdpa
