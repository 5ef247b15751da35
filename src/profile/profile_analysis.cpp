#include "profile/profile_analysis.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "profile/kernel_names.h"
#include "model/nvtx_ranges.h"

namespace sdpa {
namespace {

struct Window {
  uint64_t start = 0, end = 0;
};

// NVTX ranges by name, from their start and end markers.
std::map<std::string, Window> marker_ranges(const std::vector<MarkerRecord>& markers) {
  std::unordered_map<uint32_t, const MarkerRecord*> open;
  std::map<std::string, Window> ranges;
  for (const MarkerRecord& m : markers) {
    if (m.is_start) {
      open[m.id] = &m;
    } else if (const auto it = open.find(m.id); it != open.end()) {
      ranges[it->second->name] = Window{it->second->timestamp, m.timestamp};
      open.erase(it);
    }
  }
  return ranges;
}

auto launch_key(const KernelRecord& k) {
  return std::tie(k.name, k.grid.x, k.grid.y, k.grid.z, k.block.x, k.block.y, k.block.z, k.cluster.x,
                  k.cluster.y, k.cluster.z, k.registers_per_thread, k.static_shared, k.dynamic_shared,
                  k.shared_config, k.launch_type);
}

struct KernelGroup {
  const KernelRecord* first = nullptr;
  int launches = 0;
  uint64_t total_ns = 0;
};

struct MemcpyGroup {
  std::string kind;
  int copies = 0;
  uint64_t bytes = 0;
  uint64_t total_ns = 0;
};

KernelProfile kernel_profile(const KernelGroup& g, std::size_t forwards, const std::optional<ArchLimits>& arch,
                        int sm_count) {
  const KernelRecord& k = *g.first;
  KernelProfile p;
  p.full_name = demangle(k.name);
  p.name = shorten_kernel_name(p.full_name);
  p.category = categorize_kernel(p.full_name);
  p.per_forward = static_cast<double>(g.launches) / static_cast<double>(forwards);
  p.mean_us = static_cast<double>(g.total_ns) / g.launches / 1e3;
  p.grid = k.grid;
  p.block = k.block;
  p.cluster = k.cluster;
  p.registers_per_thread = k.registers_per_thread;
  p.static_shared = k.static_shared;
  p.dynamic_shared = k.dynamic_shared;
  p.shared_config = k.shared_config;
  p.launch_type = k.launch_type;
  if (arch) {
    LaunchResources launch;
    launch.threads_per_block = static_cast<int>(k.block.count());
    launch.registers_per_thread = k.registers_per_thread;
    launch.static_shared = static_cast<std::size_t>(k.static_shared);
    launch.dynamic_shared = static_cast<std::size_t>(k.dynamic_shared);
    launch.grid_blocks = k.grid.count();
    launch.shared_config = static_cast<std::size_t>(k.shared_config);
    p.occupancy = estimate_occupancy(launch, *arch, sm_count);
  }
  return p;
}

}  // namespace

CaseProfile analyze_activity(const ActivityRecords& records, const std::vector<ForwardWindow>& forwards,
                             const std::optional<ArchLimits>& arch, int sm_count) {
  CaseProfile profile;
  profile.dropped_records = records.dropped;
  profile.forwards.resize(forwards.size());
  if (forwards.empty()) return profile;

  const std::map<std::string, Window> ranges = marker_ranges(records.markers);
  std::vector<Window> windows;
  for (const ForwardWindow& f : forwards) {
    const auto range = ranges.find(f.name);
    profile.nvtx_ranges += range != ranges.end() ? 1 : 0;
    windows.push_back(range != ranges.end() ? range->second : Window{f.start, f.end});
  }

  std::unordered_map<uint32_t, std::size_t> forward_of;  // correlation id -> forward
  for (const ApiRecord& api : records.api_calls)
    for (std::size_t i = 0; i < windows.size(); ++i)
      if (api.start >= windows[i].start && api.end <= windows[i].end) forward_of[api.correlation] = i;
  const auto find_forward = [&](uint32_t correlation) -> ForwardProfile* {
    const auto it = forward_of.find(correlation);
    return it == forward_of.end() ? nullptr : &profile.forwards[it->second];
  };
  std::vector<uint64_t> last_end(forwards.size(), 0);
  const auto ended = [&](uint32_t correlation, uint64_t end) {
    uint64_t& last = last_end[forward_of.at(correlation)];
    last = std::max(last, end);
  };

  std::vector<KernelGroup> kernel_groups;  // in launch order
  std::vector<const KernelRecord*> kernels;
  for (const KernelRecord& k : records.kernels) kernels.push_back(&k);
  std::sort(kernels.begin(), kernels.end(), [](const KernelRecord* a, const KernelRecord* b) { return a->start < b->start; });
  for (const KernelRecord* k : kernels) {
    ForwardProfile* f = find_forward(k->correlation);
    if (f == nullptr) {
      ++profile.unattributed;
      continue;
    }
    ++f->kernels;
    f->kernel_us += static_cast<double>(k->end - k->start) / 1e3;
    ended(k->correlation, k->end);
    auto group = std::find_if(kernel_groups.begin(), kernel_groups.end(),
                              [&](const KernelGroup& g) { return launch_key(*g.first) == launch_key(*k); });
    if (group == kernel_groups.end()) group = kernel_groups.insert(kernel_groups.end(), KernelGroup{k, 0, 0});
    if (f == &profile.forwards.back())
      profile.launch_order.push_back(static_cast<std::size_t>(group - kernel_groups.begin()));
    ++group->launches;
    group->total_ns += k->end - k->start;
  }

  std::vector<MemcpyGroup> memcpy_groups;
  for (const MemcpyRecord& m : records.memcpys) {
    ForwardProfile* f = find_forward(m.correlation);
    if (f == nullptr) {
      ++profile.unattributed;
      continue;
    }
    ++f->memcpys;
    f->memcpy_bytes += m.bytes;
    ended(m.correlation, m.end);
    auto group = std::find_if(memcpy_groups.begin(), memcpy_groups.end(),
                              [&](const MemcpyGroup& g) { return g.kind == m.kind; });
    if (group == memcpy_groups.end()) group = memcpy_groups.insert(memcpy_groups.end(), MemcpyGroup{m.kind, 0, 0, 0});
    ++group->copies;
    group->bytes += m.bytes;
    group->total_ns += m.end - m.start;
  }

  for (const MemsetRecord& m : records.memsets) {
    ForwardProfile* f = find_forward(m.correlation);
    if (f == nullptr) {
      ++profile.unattributed;
      continue;
    }
    ++f->memsets;
    ended(m.correlation, m.end);
  }

  for (std::size_t i = 0; i < forwards.size(); ++i)
    if (last_end[i] > windows[i].start) profile.forwards[i].wall_us = static_cast<double>(last_end[i] - windows[i].start) / 1e3;

  const RangeTree tree = range_tree(records);
  std::vector<std::size_t> forward_ranges;
  for (const ForwardWindow& f : forwards)
    for (std::size_t i = 0; i < tree.ranges.size(); ++i)
      if (tree.ranges[i].closed && tree.ranges[i].name == f.name) {
        forward_ranges.push_back(i);
        break;
      }
  if (!forward_ranges.empty()) profile.ops = op_table(records, tree, forward_ranges);

  const double n = static_cast<double>(forwards.size());
  for (const KernelGroup& g : kernel_groups) profile.kernels.push_back(kernel_profile(g, forwards.size(), arch, sm_count));
  for (const MemcpyGroup& g : memcpy_groups)
    profile.memcpys.push_back(MemcpyProfile{g.kind, g.copies / n, static_cast<double>(g.bytes) / n,
                                            static_cast<double>(g.total_ns) / g.copies / 1e3});
  return profile;
}

}  // namespace sdpa
