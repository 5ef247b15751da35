// CUPTI, loaded at run time with dlopen: sdpa-prof starts, verifies and times where libcupti
// is missing, and only the profile is then off.
#pragma once

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <string>
#include <string_view>

namespace sdpa {

// The loaded library's text for a result ("unknown CUPTI result" when none is loaded).
const char* cupti_result_text(CUptiResult result);

// The CUPTI entry points the tool calls, named as CUPTI names them (so that a failed call's
// text in an error reads as the CUPTI call).
struct CuptiApi {
  decltype(&::cuptiGetResultString) cuptiGetResultString = nullptr;
  decltype(&::cuptiGetVersion) cuptiGetVersion = nullptr;
  decltype(&::cuptiGetCallbackName) cuptiGetCallbackName = nullptr;
  decltype(&::cuptiGetTimestamp) cuptiGetTimestamp = nullptr;
  decltype(&::cuptiActivityRegisterCallbacks) cuptiActivityRegisterCallbacks = nullptr;
  decltype(&::cuptiActivityEnable) cuptiActivityEnable = nullptr;
  decltype(&::cuptiActivityDisable) cuptiActivityDisable = nullptr;
  decltype(&::cuptiActivityFlushAll) cuptiActivityFlushAll = nullptr;
  decltype(&::cuptiActivityGetNextRecord) cuptiActivityGetNextRecord = nullptr;
  decltype(&::cuptiActivityGetNumDroppedRecords) cuptiActivityGetNumDroppedRecords = nullptr;
  decltype(&::cuptiActivityFlushPeriod) cuptiActivityFlushPeriod = nullptr;
  decltype(&::cuptiSubscribe) cuptiSubscribe = nullptr;
  // NVTX's entry point into CUPTI, which the injection library hands NVTX to (src/inject).
  int (*InitializeInjectionNvtx2)(const void* (*get_export_table)(uint32_t)) = nullptr;
  std::string path;      // the file that loaded
  uint32_t version = 0;  // cuptiGetVersion: the API version, e.g. 130001
};

// The range profiler's and the profiler host's entry points (hardware counters), from the same
// library; a libcupti without them still traces.
struct CuptiProfilerApi {
  decltype(&::cuptiProfilerInitialize) cuptiProfilerInitialize = nullptr;
  decltype(&::cuptiProfilerGetCounterAvailability) cuptiProfilerGetCounterAvailability = nullptr;
  decltype(&::cuptiDeviceGetChipName) cuptiDeviceGetChipName = nullptr;
  decltype(&::cuptiProfilerHostInitialize) cuptiProfilerHostInitialize = nullptr;
  decltype(&::cuptiProfilerHostDeinitialize) cuptiProfilerHostDeinitialize = nullptr;
  decltype(&::cuptiProfilerHostGetBaseMetrics) cuptiProfilerHostGetBaseMetrics = nullptr;
  decltype(&::cuptiProfilerHostGetMetricProperties) cuptiProfilerHostGetMetricProperties = nullptr;
  decltype(&::cuptiProfilerHostConfigAddMetrics) cuptiProfilerHostConfigAddMetrics = nullptr;
  decltype(&::cuptiProfilerHostGetConfigImageSize) cuptiProfilerHostGetConfigImageSize = nullptr;
  decltype(&::cuptiProfilerHostGetConfigImage) cuptiProfilerHostGetConfigImage = nullptr;
  decltype(&::cuptiProfilerHostGetNumOfPasses) cuptiProfilerHostGetNumOfPasses = nullptr;
  decltype(&::cuptiProfilerHostEvaluateToGpuValues) cuptiProfilerHostEvaluateToGpuValues = nullptr;
  decltype(&::cuptiRangeProfilerEnable) cuptiRangeProfilerEnable = nullptr;
  decltype(&::cuptiRangeProfilerDisable) cuptiRangeProfilerDisable = nullptr;
  decltype(&::cuptiRangeProfilerGetCounterDataSize) cuptiRangeProfilerGetCounterDataSize = nullptr;
  decltype(&::cuptiRangeProfilerCounterDataImageInitialize) cuptiRangeProfilerCounterDataImageInitialize = nullptr;
  decltype(&::cuptiRangeProfilerSetConfig) cuptiRangeProfilerSetConfig = nullptr;
  decltype(&::cuptiRangeProfilerStart) cuptiRangeProfilerStart = nullptr;
  decltype(&::cuptiRangeProfilerStop) cuptiRangeProfilerStop = nullptr;
  decltype(&::cuptiRangeProfilerDecodeData) cuptiRangeProfilerDecodeData = nullptr;
  decltype(&::cuptiRangeProfilerGetCounterDataInfo) cuptiRangeProfilerGetCounterDataInfo = nullptr;
};

// Loads libcupti once per process. nullptr, with the reason in `why`, when it is missing, lacks
// an entry point or is older than the records this build reads.
const CuptiApi* load_cupti(std::string& why);
// The same library's counter entry points; nullptr, with the reason, when it lacks one.
const CuptiProfilerApi* load_cupti_profiler(std::string& why);

// The name of a runtime or driver API call as its callers write it: "cudaLaunchKernel" for
// CUPTI's "cudaLaunchKernel_v7000"; "" when CUPTI has no name for the id.
std::string cupti_callback_name(const CuptiApi& api, CUpti_CallbackDomain domain, uint32_t callback_id);
// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": CUPTI's trailing "_v<digits>" dropped.
std::string_view without_version_suffix(std::string_view cupti_name);

}  // namespace sdpa
