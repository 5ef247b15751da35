#include "profile/cupti_library.h"

#include <dlfcn.h>
#include <link.h>

#include <fmt/format.h>


namespace sdpa {
namespace {

constexpr uint32_t kCuptiMajor = CUPTI_API_VERSION / 10000;  // 13: CUpti_ActivityKernel10 and friends

struct Loaded {
  CuptiApi api;
  std::string error;  // empty when api is usable
  CuptiProfilerApi profiler;
  std::string profiler_error;  // empty when profiler is usable
};

template <typename Fn>
bool resolve(void* library, const char* symbol, Fn& fn, std::string& error) {
  fn = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (fn == nullptr && error.empty()) error = fmt::format("libcupti lacks {}", symbol);
  return fn != nullptr;
}

Loaded load() {
  Loaded l;
  const std::string soname = fmt::format("libcupti.so.{}", kCuptiMajor);
  void* library = nullptr;
  std::string tried;
  for (const std::string& candidate : {soname, fmt::format("{}/{}", SDPA_CUDA_LIBRARY_DIR, soname)}) {
    library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library != nullptr) break;
    tried += fmt::format("{}{}", tried.empty() ? "" : "; ", dlerror());
  }
  if (library == nullptr) {
    l.error = fmt::format("CUPTI could not be loaded ({})", tried);
    return l;
  }
  const link_map* map = nullptr;
  l.api.path = dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr ? map->l_name : soname;

  CuptiApi& a = l.api;
  resolve(library, "cuptiGetResultString", a.cuptiGetResultString, l.error);
  resolve(library, "cuptiGetVersion", a.cuptiGetVersion, l.error);
  resolve(library, "cuptiGetCallbackName", a.cuptiGetCallbackName, l.error);
  resolve(library, "cuptiGetTimestamp", a.cuptiGetTimestamp, l.error);
  resolve(library, "cuptiActivityRegisterCallbacks", a.cuptiActivityRegisterCallbacks, l.error);
  resolve(library, "cuptiActivityEnable", a.cuptiActivityEnable, l.error);
  resolve(library, "cuptiActivityDisable", a.cuptiActivityDisable, l.error);
  resolve(library, "cuptiActivityFlushAll", a.cuptiActivityFlushAll, l.error);
  resolve(library, "cuptiActivityGetNextRecord", a.cuptiActivityGetNextRecord, l.error);
  resolve(library, "cuptiActivityGetNumDroppedRecords", a.cuptiActivityGetNumDroppedRecords, l.error);
  resolve(library, "cuptiActivityFlushPeriod", a.cuptiActivityFlushPeriod, l.error);
  resolve(library, "cuptiSubscribe", a.cuptiSubscribe, l.error);
  resolve(library, "InitializeInjectionNvtx2", a.InitializeInjectionNvtx2, l.error);
  if (!l.error.empty()) return l;
  CuptiProfilerApi& p = l.profiler;
  std::string& perr = l.profiler_error;
  resolve(library, "cuptiProfilerInitialize", p.cuptiProfilerInitialize, perr);
  resolve(library, "cuptiProfilerGetCounterAvailability", p.cuptiProfilerGetCounterAvailability, perr);
  resolve(library, "cuptiDeviceGetChipName", p.cuptiDeviceGetChipName, perr);
  resolve(library, "cuptiProfilerHostInitialize", p.cuptiProfilerHostInitialize, perr);
  resolve(library, "cuptiProfilerHostDeinitialize", p.cuptiProfilerHostDeinitialize, perr);
  resolve(library, "cuptiProfilerHostGetBaseMetrics", p.cuptiProfilerHostGetBaseMetrics, perr);
  resolve(library, "cuptiProfilerHostGetMetricProperties", p.cuptiProfilerHostGetMetricProperties, perr);
  resolve(library, "cuptiProfilerHostConfigAddMetrics", p.cuptiProfilerHostConfigAddMetrics, perr);
  resolve(library, "cuptiProfilerHostGetConfigImageSize", p.cuptiProfilerHostGetConfigImageSize, perr);
  resolve(library, "cuptiProfilerHostGetConfigImage", p.cuptiProfilerHostGetConfigImage, perr);
  resolve(library, "cuptiProfilerHostGetNumOfPasses", p.cuptiProfilerHostGetNumOfPasses, perr);
  resolve(library, "cuptiProfilerHostEvaluateToGpuValues", p.cuptiProfilerHostEvaluateToGpuValues, perr);
  resolve(library, "cuptiRangeProfilerEnable", p.cuptiRangeProfilerEnable, perr);
  resolve(library, "cuptiRangeProfilerDisable", p.cuptiRangeProfilerDisable, perr);
  resolve(library, "cuptiRangeProfilerGetCounterDataSize", p.cuptiRangeProfilerGetCounterDataSize, perr);
  resolve(library, "cuptiRangeProfilerCounterDataImageInitialize", p.cuptiRangeProfilerCounterDataImageInitialize,
          perr);
  resolve(library, "cuptiRangeProfilerSetConfig", p.cuptiRangeProfilerSetConfig, perr);
  resolve(library, "cuptiRangeProfilerStart", p.cuptiRangeProfilerStart, perr);
  resolve(library, "cuptiRangeProfilerStop", p.cuptiRangeProfilerStop, perr);
  resolve(library, "cuptiRangeProfilerDecodeData", p.cuptiRangeProfilerDecodeData, perr);
  resolve(library, "cuptiRangeProfilerGetCounterDataInfo", p.cuptiRangeProfilerGetCounterDataInfo, perr);
  if (!perr.empty()) perr = fmt::format("{} (the range profiler came with CUDA 12.6)", perr);
  if (const CUptiResult r = a.cuptiGetVersion(&a.version); r != CUPTI_SUCCESS) {
    l.error = fmt::format("cuptiGetVersion failed ({})", static_cast<int>(r));
  } else if (a.version / 10000 < kCuptiMajor) {
    l.error = fmt::format("{} has CUPTI API version {}, older than the {} this build reads", l.api.path,
                          a.version, CUPTI_API_VERSION);
  }
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const CuptiApi* load_cupti(std::string& why) {
  const Loaded& l = loaded();
  why = l.error;
  return l.error.empty() ? &l.api : nullptr;
}

const CuptiProfilerApi* load_cupti_profiler(std::string& why) {
  const Loaded& l = loaded();
  why = l.error.empty() ? l.profiler_error : l.error;
  return why.empty() ? &l.profiler : nullptr;
}

std::string_view without_version_suffix(std::string_view name) {
  const std::size_t v = name.rfind("_v");
  if (v == std::string_view::npos || v == 0 || v + 2 == name.size()) return name;
  const std::string_view digits = name.substr(v + 2);
  return digits.find_first_not_of("0123456789") == std::string_view::npos ? name.substr(0, v) : name;
}

std::string cupti_callback_name(const CuptiApi& api, CUpti_CallbackDomain domain, uint32_t callback_id) {
  const char* name = nullptr;
  if (api.cuptiGetCallbackName(domain, callback_id, &name) != CUPTI_SUCCESS || name == nullptr) return "";
  return std::string(without_version_suffix(name));
}

const char* cupti_result_text(CUptiResult result) {
  const char* text = nullptr;
  const Loaded& l = loaded();
  if (l.api.cuptiGetResultString != nullptr && l.api.cuptiGetResultString(result, &text) == CUPTI_SUCCESS &&
      text != nullptr)
    return text;
  return "unknown CUPTI result";
}

}  // namespace sdpa
