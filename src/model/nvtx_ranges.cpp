#include "model/nvtx_ranges.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_set>
#include <utility>

namespace sdpa {
namespace {

using ThreadKey = std::pair<uint32_t, uint32_t>;  // process, thread

uint64_t last_time_of(const ActivityRecords& r) {
  uint64_t t = 0;
  for (const ApiRecord& a : r.api_calls) t = std::max(t, a.end);
  for (const MarkerRecord& m : r.markers) t = std::max(t, m.timestamp);
  for (const KernelRecord& k : r.kernels) t = std::max(t, k.end);
  return t;
}

std::vector<NvtxRange> ranges_from_markers(const std::vector<MarkerRecord>& markers,
                                           uint64_t last_time) {
  std::unordered_map<uint32_t, std::size_t> open;
  std::vector<NvtxRange> ranges;
  for (std::size_t i = 0; i < markers.size(); ++i) {
    const MarkerRecord& m = markers[i];
    if (m.is_start) {
      open[m.id] = ranges.size();
      ranges.push_back(
          NvtxRange{i, m.name, m.process_id, m.thread_id, m.timestamp, last_time, false, -1, 0});
    } else if (const auto it = open.find(m.id); it != open.end()) {
      NvtxRange& r = ranges[it->second];
      r.end = std::max(m.timestamp, r.start);
      r.closed = true;
      open.erase(it);
    }
  }
  // Outer before inner: the earlier start, then the later end.
  std::stable_sort(ranges.begin(), ranges.end(), [](const NvtxRange& a, const NvtxRange& b) {
    return std::make_tuple(a.start, b.end) < std::make_tuple(b.start, a.end);
  });
  return ranges;
}

void nest(std::vector<NvtxRange>& ranges) {
  std::map<ThreadKey, std::vector<std::size_t>> open;  // per thread: ranges begun, not yet ended
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    NvtxRange& r = ranges[i];
    std::vector<std::size_t>& stack = open[{r.process_id, r.thread_id}];
    while (!stack.empty() && (ranges[stack.back()].end < r.start ||
                              (ranges[stack.back()].end == r.start && ranges[stack.back()].closed)))
      stack.pop_back();
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      const NvtxRange& p = ranges[*it];
      if (p.start > r.start || p.end < r.start) continue;
      if (!r.closed) r.end = std::min(r.end, p.end);  // it cannot have outlived its parent
      if (r.end > p.end) continue;                    // overlapping, not nested (start/end ranges)
      r.parent = static_cast<int>(*it);
      r.depth = p.depth + 1;
      break;
    }
    stack.push_back(i);
  }
}

// The innermost range open on the call's thread around it.
std::optional<std::size_t> innermost(const std::vector<NvtxRange>& ranges,
                                     const std::vector<std::size_t>& on_thread,
                                     const ApiRecord& call) {
  // on_thread is in start order: the last range holding the call is the innermost.
  const auto past =
      std::upper_bound(on_thread.begin(), on_thread.end(), call.start,
                       [&](uint64_t t, std::size_t i) { return t < ranges[i].start; });
  for (auto it = std::make_reverse_iterator(past); it != on_thread.rend(); ++it) {
    const NvtxRange& r = ranges[*it];
    if (r.end >= call.end) return *it;
    // A range that ended before the call may sit inside an outer one still open; a top-level one
    // cannot: nothing before it holds the call.
    if (r.depth == 0) break;
  }
  return std::nullopt;
}

std::unordered_set<uint32_t> launched_correlations(const ActivityRecords& r) {
  std::unordered_set<uint32_t> ids;
  for (const KernelRecord& k : r.kernels) ids.insert(k.correlation);
  for (const MemcpyRecord& m : r.memcpys) ids.insert(m.correlation);
  for (const MemsetRecord& m : r.memsets) ids.insert(m.correlation);
  return ids;
}

// Time covered by the intervals (calls nest when a runtime call makes the driver's).
double covered_us(std::vector<std::pair<uint64_t, uint64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  uint64_t covered = 0, reach = 0;
  for (const auto& [start, end] : intervals) {
    const uint64_t from = std::max(start, reach);
    if (end > from) covered += end - from;
    reach = std::max(reach, end);
  }
  return static_cast<double>(covered) / 1e3;
}

// Autograd runs a backward's ops on its own thread, while the thread that called backward() waits
// inside the forward's range: a closed range at the top of another thread of the same process,
// wholly inside one forward's time, is that forward's op. -> the forward's index, or -1 per range.
std::vector<int> adopted_ops(const std::vector<NvtxRange>& ranges,
                             const std::vector<std::size_t>& forwards) {
  std::vector<int> adopted(ranges.size(), -1);
  std::vector<bool> is_forward(ranges.size(), false);
  for (const std::size_t f : forwards)
    if (f < ranges.size()) is_forward[f] = true;
  for (std::size_t f = 0; f < forwards.size(); ++f) {
    if (forwards[f] >= ranges.size()) continue;
    const NvtxRange& fr = ranges[forwards[f]];
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      const NvtxRange& r = ranges[i];
      if (is_forward[i] || r.parent >= 0 || !r.closed || r.process_id != fr.process_id ||
          r.thread_id == fr.thread_id || r.start < fr.start || r.end > fr.end)
        continue;
      adopted[i] = static_cast<int>(f);
    }
  }
  return adopted;
}

}  // namespace

RangeTree range_tree(const ActivityRecords& records) {
  RangeTree tree;
  tree.ranges = ranges_from_markers(records.markers, last_time_of(records));
  nest(tree.ranges);
  std::map<ThreadKey, std::vector<std::size_t>> by_thread;
  for (std::size_t i = 0; i < tree.ranges.size(); ++i)
    by_thread[{tree.ranges[i].process_id, tree.ranges[i].thread_id}].push_back(i);
  const std::unordered_set<uint32_t> launched = launched_correlations(records);
  for (const ApiRecord& a : records.api_calls) {
    if (!launched.contains(a.correlation)) continue;
    tree.launch_calls.push_back(&a);
    const auto thread = by_thread.find({a.process_id, a.thread_id});
    if (thread == by_thread.end()) continue;
    if (const std::optional<std::size_t> r = innermost(tree.ranges, thread->second, a))
      tree.launched_in.emplace(a.correlation, *r);  // a runtime call and its driver call: the first
  }
  return tree;
}

std::optional<OpsProfile> op_table(const ActivityRecords& records, const RangeTree& tree,
                                   const std::vector<std::size_t>& forwards) {
  const std::vector<NvtxRange>& ranges = tree.ranges;
  OpsProfile out;
  std::vector<int> row_of(ranges.size(), -1);  // op range -> its row
  std::vector<int> forward_of(ranges.size(),
                              -1);  // a forward's range, or an op in it -> the forward
  std::map<std::pair<int, std::string>, int> row_at;  // (parent row, name) -> row
  for (std::size_t f = 0; f < forwards.size(); ++f)
    if (forwards[f] < ranges.size()) forward_of[forwards[f]] = static_cast<int>(f);
  const std::vector<int> adopted = adopted_ops(ranges, forwards);
  std::set<std::pair<int, ThreadKey>>
      adopting_threads;  // (forward, a thread its adopted ops ran on)
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const NvtxRange& r = ranges[i];
    if (forward_of[i] >= 0) continue;  // a forward's own range
    int forward = adopted[i];
    int parent_row = -1;  // -1: the forward called it
    if (r.parent >= 0) {
      const auto parent = static_cast<std::size_t>(r.parent);
      forward = forward_of[parent];  // -1: outside every forward, or under an op that never ended
      parent_row = row_of[parent];
    }
    if (forward < 0) continue;
    if (!r.closed) {
      ++out.unclosed;
      continue;
    }
    forward_of[i] = forward;
    if (r.parent < 0) adopting_threads.insert({forward, {r.process_id, r.thread_id}});
    const OpName name = split_op_name(r.name);
    const auto [it, added] =
        row_at.try_emplace({parent_row, name.name}, static_cast<int>(out.ops.size()));
    if (added) {
      OpProfile row;
      row.name = name.name;
      row.parent = parent_row;
      row.depth = parent_row < 0 ? 0 : out.ops[static_cast<std::size_t>(parent_row)].depth + 1;
      out.ops.push_back(row);
    }
    row_of[i] = it->second;
    OpProfile& row = out.ops[static_cast<std::size_t>(it->second)];
    const double us = static_cast<double>(r.end - r.start) / 1e3;
    row.calls += 1;
    row.total_us += us;
    row.self_us += us;
    if (parent_row >= 0) out.ops[static_cast<std::size_t>(parent_row)].self_us -= us;
    if (!name.shapes.empty() && row.shapes.size() < kMaxOpShapes &&
        std::find(row.shapes.begin(), row.shapes.end(), name.shapes) == row.shapes.end())
      row.shapes.push_back(name.shapes);
  }
  if (out.ops.empty()) return std::nullopt;

  const auto launched = [&](uint32_t correlation, double OpProfile::*count) {
    const auto it = tree.launched_in.find(correlation);
    if (it == tree.launched_in.end() || forward_of[it->second] < 0) return;
    if (row_of[it->second] >= 0)
      out.ops[static_cast<std::size_t>(row_of[it->second])].*count += 1;
    else
      out.launches_outside_ops += 1;
  };
  for (const KernelRecord& k : records.kernels) launched(k.correlation, &OpProfile::kernels);
  for (const MemcpyRecord& m : records.memcpys) launched(m.correlation, &OpProfile::memcpys);
  for (const MemsetRecord& m : records.memsets) launched(m.correlation, &OpProfile::memsets);

  double host_ns = 0;
  std::vector<std::pair<uint64_t, uint64_t>> launch_calls;
  for (std::size_t f = 0; f < forwards.size(); ++f) {
    if (forwards[f] >= ranges.size()) continue;
    const NvtxRange& fr = ranges[forwards[f]];
    host_ns += static_cast<double>(fr.end - fr.start);
    for (const ApiRecord* a : tree.launch_calls) {
      const bool on_its_threads =
          (a->process_id == fr.process_id && a->thread_id == fr.thread_id) ||
          adopting_threads.contains({static_cast<int>(f), {a->process_id, a->thread_id}});
      if (on_its_threads && a->start >= fr.start && a->end <= fr.end)
        launch_calls.emplace_back(a->start, a->end);
    }
  }
  const double n = static_cast<double>(forwards.size());
  for (OpProfile& row : out.ops) {
    for (double* v :
         {&row.calls, &row.total_us, &row.self_us, &row.kernels, &row.memcpys, &row.memsets})
      *v /= n;
    row.self_us =
        std::max(0.0, row.self_us);  // children that fill their parent: rounding, not time
  }
  out.host_us = host_ns / 1e3 / n;
  out.launch_api_us = covered_us(std::move(launch_calls)) / n;
  out.launches_outside_ops /= n;
  return out;
}

}  // namespace sdpa
