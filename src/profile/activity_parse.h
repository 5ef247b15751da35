// CUPTI's activity buffers turned into the plain records of model/activity.h, and the activity
// kinds recorded: one copy for our own session (cupti_session) and for the injection library
// of `trace` (src/inject), which records in another process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "model/activity.h"
#include "profile/cupti_library.h"

namespace sdpa {

// A buffer for CUPTI to fill; nullptr with size 0 when memory is short (CUPTI then drops
// records and counts them). Freed with std::free.
uint8_t* allocate_activity_buffer(std::size_t& size);

// Kernels, memcpys, memsets, runtime and driver API calls, NVTX markers: all enabled or none.
// The first failing CUPTI result, or CUPTI_SUCCESS.
CUptiResult enable_recorded_kinds(const CuptiApi& api);
CUptiResult disable_recorded_kinds(const CuptiApi& api);

// Not thread-safe: its caller serializes the buffers CUPTI completes.
class ActivityParser {
 public:
  explicit ActivityParser(const CuptiApi& api) : api_(api) {}

  // Appends the buffer's records to `out`, and the count CUPTI dropped for (context, stream).
  // Returns the first CUPTI call that failed, CUPTI_SUCCESS when none did.
  CUptiResult parse(CUcontext context, uint32_t stream_id, uint8_t* buffer, std::size_t valid_size,
                    ActivityRecords& out);

 private:
  ApiRecord api_record(const CUpti_ActivityAPI& a);  // fills callback_names_

  const CuptiApi& api_;
  std::map<std::pair<ApiKind, uint32_t>, std::string>
      callback_names_;  // one cuptiGetCallbackName per call kind
};

}  // namespace sdpa
