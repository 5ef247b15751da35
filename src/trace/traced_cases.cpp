#include "trace/traced_cases.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "model/nvtx_ranges.h"
#include "model/range_name.h"
#include "profile/findings.h"
#include "profile/profile_analysis.h"

namespace sdpa {
namespace {

// The forwards of each case, by the case's name, in the order the cases began.
std::vector<std::pair<ForwardRange, std::vector<ForwardWindow>>> case_forwards(
    const std::vector<NvtxRange>& ranges) {
  std::vector<std::pair<ForwardRange, std::vector<ForwardWindow>>> cases;
  std::map<std::string, std::size_t> index;
  for (const NvtxRange& r : ranges) {
    const std::optional<ForwardRange> parsed = parse_forward_range(r.name);
    if (!parsed) continue;
    const ForwardRange& f = *parsed;
    auto [it, added] = index.try_emplace(f.prefix, cases.size());
    if (added) cases.emplace_back(f, std::vector<ForwardWindow>{});
    std::vector<ForwardWindow>& windows = cases[it->second].second;
    // The analysis finds a forward's range by its name: a name used twice is one forward.
    if (std::none_of(windows.begin(), windows.end(),
                     [&](const ForwardWindow& w) { return w.name == r.name; }))
      windows.push_back(ForwardWindow{r.name, r.start, r.end});
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

  const RangeTree tree = range_tree(records);
  const auto cases = case_forwards(tree.ranges);
  for (const auto& [range, windows] : cases) {
    CaseResult c;
    c.backend = range.backend;
    c.problem = range.problem;
    c.status = CaseStatus::ok;
    c.profile = analyze_activity(records, windows, arch, sm_count);
    c.profile->findings = profile_findings(*c.profile, c.problem.pass);
    out.cases.push_back(std::move(c));
  }
  t.cases = static_cast<int>(out.cases.size());

  // GPU work outside the cases, by the innermost range its launching call ran in ("" for none).
  std::vector<bool> in_case(tree.ranges.size(), false);  // a case range, or inside one
  for (std::size_t i = 0; i < tree.ranges.size(); ++i) {
    const NvtxRange& r = tree.ranges[i];
    in_case[i] = parse_forward_range(r.name).has_value() ||
                 (r.parent >= 0 && in_case[static_cast<std::size_t>(r.parent)]);
  }
  // A case's work may be launched from another thread inside its time (autograd runs a
  // backward's kernels on its device thread): the cases' analysis counts it by time, so here too.
  std::unordered_set<uint32_t> in_case_window;
  for (const ApiRecord* call : tree.launch_calls)
    for (const auto& [range, windows] : cases)
      for (const ForwardWindow& w : windows)
        if (call->start >= w.start && call->end <= w.end) in_case_window.insert(call->correlation);
  std::map<std::string, std::size_t> bucket_of;
  const auto bucket = [&](uint32_t correlation) -> RangeActivity* {
    if (in_case_window.contains(correlation)) return nullptr;
    const auto it = tree.launched_in.find(correlation);
    if (it != tree.launched_in.end() && in_case[it->second]) return nullptr;
    const std::string name = it != tree.launched_in.end() ? tree.ranges[it->second].name : "";
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
