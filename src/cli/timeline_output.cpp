#include "cli/timeline_output.h"

#include <unistd.h>

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "io/atomic_file.h"
#include "profile/kernel_names.h"
#include "report/timeline.h"

namespace sdpa {
namespace {

// No record becomes an event shorter than this, so more records than max_bytes / this could
// never reach the file.
constexpr uint64_t kMinEventBytes = 64;

uint64_t count(const ActivityRecords& r) {
  return r.kernels.size() + r.memcpys.size() + r.memsets.size() + r.api_calls.size() +
         r.markers.size();
}

}  // namespace

void TimelineRecorder::add(ActivityRecords&& records) {
  add(std::move(records), static_cast<uint32_t>(::getpid()), "sdpa-prof run");
}

void TimelineRecorder::add(ActivityRecords&& records, uint32_t process_id, const std::string& process_name) {
  const uint64_t n = count(records);
  if (left_out_ > 0 || (kept_records_ + n) * kMinEventBytes > max_bytes_) {  // a prefix of the run, no holes
    left_out_ += n;
    return;
  }
  kept_records_ += n;
  kept_.push_back(Kept{process_id, process_name, std::move(records)});
}

void TimelineRecorder::write(const std::string& path, std::ostream& progress) const {
  std::vector<TimelineProcess> processes;
  for (const Kept& k : kept_) {
    auto p = std::find_if(processes.begin(), processes.end(),
                          [&](const TimelineProcess& t) { return t.process_id == k.process_id; });
    if (p == processes.end()) p = processes.insert(processes.end(), TimelineProcess{k.process_name, k.process_id, device_name_, 0, {}});
    p->record_sets.push_back(&k.records);
  }
  TimelineOptions options;
  options.max_bytes = max_bytes_;
  options.kernel_label = [](const std::string& name) {
    return shorten_kernel_name(demangle(name));
  };
  options.records_left_out = left_out_;
  AtomicFileStream file(path);
  const TimelineSummary s = write_timeline(file.stream(), processes, options);
  file.commit();
  progress << fmt::format(
      "wrote {} ({} kernels, {} memcpys, {} memsets, {} API calls, {} NVTX ranges)\n", path,
      s.kernels, s.memcpys, s.memsets, s.api_calls, s.ranges);
  if (s.truncated)
    progress << fmt::format(
        "sdpa-prof: the timeline {} reached its cap of {} MiB and leaves out the later events "
        "(raise --timeline-max-mb)\n",
        path, max_bytes_ >> 20);
}

}  // namespace sdpa
