#include "trace/traced_cases.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "model/range_name.h"
#include "profile/findings.h"
#include "profile/profile_analysis.h"

namespace sdpa {
namespace {

struct Range {
  const std::string* name = nullptr;
  uint64_t start = 0, end = 0;
  bool is_case = false;
};

// Ranges from their start and end markers; one never closed ends with the last record.
std::vector<Range> ranges_of(const ActivityRecords& records, uint64_t last_time) {
  std::unordered_map<uint32_t, std::size_t> open;
  std::vector<Range> ranges;
  for (const MarkerRecord& m : records.markers) {
    if (m.is_start) {
      open[m.id] = ranges.size();
      ranges.push_back(
          Range{&m.name, m.timestamp, last_time, parse_forward_range(m.name).has_value()});
    } else if (const auto it = open.find(m.id); it != open.end()) {
      ranges[it->second].end = std::max(m.timestamp, ranges[it->second].start);
      open.erase(it);
    }
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.start < b.start; });
  return ranges;
}

uint64_t last_time_of(const ActivityRecords& r) {
  uint64_t t = 0;
  for (const ApiRecord& a : r.api_calls) t = std::max(t, a.end);
  for (const MarkerRecord& m : r.markers) t = std::max(t, m.timestamp);
  return t;
}

// For each API call: the innermost range around it, and whether a case range is around it.
struct Placement {
  const std::string* innermost = nullptr;  // nullptr: outside any range
  bool in_case = false;
};

std::unordered_map<uint32_t, Placement> place_api_calls(const ActivityRecords& records,
                                                        const std::vector<Range>& ranges) {
  std::vector<const ApiRecord*> calls;
  for (const ApiRecord& a : records.api_calls) calls.push_back(&a);
  std::sort(calls.begin(), calls.end(),
            [](const ApiRecord* a, const ApiRecord* b) { return a->start < b->start; });
  std::unordered_map<uint32_t, Placement> placed;
  std::vector<const Range*> active;  // ranges begun before the call, not yet ended
  std::size_t next = 0;
  for (const ApiRecord* call : calls) {
    for (; next < ranges.size() && ranges[next].start <= call->start; ++next)
      active.push_back(&ranges[next]);
    std::erase_if(active, [&](const Range* r) { return r->end < call->start; });
    Placement p;
    uint64_t innermost_start = 0;
    for (const Range* r : active) {
      if (r->end < call->end) continue;
      p.in_case = p.in_case || r->is_case;
      if (p.innermost == nullptr || r->start >= innermost_start) {
        p.innermost = r->name;
        innermost_start = r->start;
      }
    }
    placed[call->correlation] = p;
  }
  return placed;
}

// The forwards of each case, by the case's name, in the order the cases began.
std::vector<std::pair<ForwardRange, std::vector<ForwardWindow>>> case_forwards(
    const std::vector<Range>& ranges) {
  std::vector<std::pair<ForwardRange, std::vector<ForwardWindow>>> cases;
  std::map<std::string, std::size_t> index;
  for (const Range& r : ranges) {
    if (!r.is_case) continue;
    const ForwardRange f = *parse_forward_range(*r.name);
    auto [it, added] = index.try_emplace(f.prefix, cases.size());
    if (added) cases.emplace_back(f, std::vector<ForwardWindow>{});
    std::vector<ForwardWindow>& windows = cases[it->second].second;
    // The analysis finds a forward's range by its name: a name used twice is one forward.
    if (std::none_of(windows.begin(), windows.end(),
                     [&](const ForwardWindow& w) { return w.name == *r.name; }))
      windows.push_back(ForwardWindow{*r.name, r.start, r.end});
  }
  return cases;
}

}  // namespace

TracedProcess analyze_traced_process(const RecordFile& file, const std::optional<ArchLimits>& arch,
                                     int sm_count) {
  const ActivityRecords& records = file.records;
  TracedProcess out;
  ProcessTrace& t = out.trace;
  t.pid = file.pid;
  t.cupti = file.cupti;
  t.partial = !file.complete || file.records_left_out > 0;
  t.partial_reason = file.partial_reason;
  if (file.records_left_out > 0)
    t.partial_reason += (t.partial_reason.empty() ? "" : "; ") +
                        std::to_string(file.records_left_out) +
                        " records past the reader's bound were counted, not analysed";
  t.kernels = records.kernels.size();
  t.memcpys = records.memcpys.size();
  t.memsets = records.memsets.size();
  t.dropped = records.dropped;
  t.records_left_out = file.records_left_out;

  const std::vector<Range> ranges = ranges_of(records, last_time_of(records));
  for (auto& [range, windows] : case_forwards(ranges)) {
    CaseResult c;
    c.backend = range.backend;
    c.problem = range.problem;
    c.status = CaseStatus::ok;
    c.profile = analyze_activity(records, windows, arch, sm_count);
    c.profile->findings = profile_findings(*c.profile);
    out.cases.push_back(std::move(c));
  }
  t.cases = static_cast<int>(out.cases.size());

  const std::unordered_map<uint32_t, Placement> placed = place_api_calls(records, ranges);
  std::map<std::string, std::size_t> bucket_of;
  const auto bucket = [&](uint32_t correlation) -> RangeActivity* {
    const auto it = placed.find(correlation);
    if (it != placed.end() && it->second.in_case) return nullptr;
    const std::string name =
        it != placed.end() && it->second.innermost != nullptr ? *it->second.innermost : "";
    auto [b, added] = bucket_of.try_emplace(name, t.outside_cases.size());
    if (added) t.outside_cases.push_back(RangeActivity{name, 0, 0, 0, 0});
    return &t.outside_cases[b->second];
  };
  std::vector<const KernelRecord*> kernels;
  for (const KernelRecord& k : records.kernels) kernels.push_back(&k);
  std::sort(kernels.begin(), kernels.end(),
            [](const KernelRecord* a, const KernelRecord* b) { return a->start < b->start; });
  for (const KernelRecord* k : kernels)
    if (RangeActivity* b = bucket(k->correlation)) {
      ++b->kernels;
      b->kernel_us += static_cast<double>(k->end - k->start) / 1e3;
    }
  for (const MemcpyRecord& m : records.memcpys)
    if (RangeActivity* b = bucket(m.correlation)) ++b->memcpys;
  for (const MemsetRecord& m : records.memsets)
    if (RangeActivity* b = bucket(m.correlation)) ++b->memsets;
  return out;
}

}  // namespace sdpa
