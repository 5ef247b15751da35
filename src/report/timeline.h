// The timeline: activity records as Chrome trace-event JSON, which Perfetto's UI and
// chrome://tracing open. Per process: its host threads (runtime and driver API calls, NVTX
// ranges) on CPU tracks, and per device its streams (kernels, memcpys, memsets) on GPU tracks;
// a flow arrow from each launching API call to the work it launched (by correlation id). A range
// nested in another on its thread (an op under emit_nvtx) is an op slice ("cat":"op", its name and
// shapes in args), with a flow of its own to each piece of work it launched itself.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "model/activity.h"

namespace sdpa {

// One traced process: the record sets it produced (one per profile pass), all on CUPTI's clock.
struct TimelineProcess {
  std::string name;             // "sdpa-prof run", "python3 share/sdpa-prof/torch_sdpa.py"
  uint32_t process_id = 0;      // for API calls and markers whose record says no process
  std::string device_name;      // "NVIDIA H200"
  int64_t clock_offset_ns = 0;  // added to this process's timestamps, to line up with the others
  std::vector<const ActivityRecords*> record_sets;
};

struct TimelineOptions {
  uint64_t max_bytes = uint64_t{256} << 20;  // the document never grows past this
  // The kernel's name on its slice (the recorded name stays in the args); the recorded name when
  // empty.
  std::function<std::string(const std::string&)> kernel_label;
  // Records the caller kept back (a bound on what it holds): the document then says truncated.
  uint64_t records_left_out = 0;
};

struct TimelineSummary {
  uint64_t events = 0;  // trace events written, metadata included
  uint64_t kernels = 0, memcpys = 0, memsets = 0, api_calls = 0, ranges = 0, flows = 0;
  uint64_t op_flows = 0;  // of `flows`: those from an op to the work it launched
  uint64_t bytes = 0;
  bool truncated =
      false;  // the size cap left later events out: the document is still complete JSON
};

// The smallest cap honoured: room for the document's opening and closing.
inline constexpr uint64_t kTimelineMinBytes = 4096;

// Streams the document to `out` event by event in time order; "ts" counts microseconds from the
// earliest record. Never writes more than options.max_bytes (raised to kTimelineMinBytes).
TimelineSummary write_timeline(std::ostream& out, const std::vector<TimelineProcess>& processes,
                               const TimelineOptions& options = {});

}  // namespace sdpa
