#include "report/timeline.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/nvtx_ranges.h"

namespace sdpa {
namespace {

// GPU tracks get pids of their own, above any Linux pid (PID_MAX_LIMIT is 2^22).
constexpr uint32_t kGpuPidBase = 1u << 30;
// Room kept for the closing "]" and the metadata after it.
constexpr uint64_t kTrailerBytes = 512;

std::string json_text(std::string_view text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string dims(const Dim3& d) {
  return fmt::format("\"{}x{}x{}\"", d.x, d.y, d.z);
}

// Microseconds with the nanoseconds kept as three decimals.
std::string micros(uint64_t ns) {
  return fmt::format("{}.{:03}", ns / 1000, ns % 1000);
}

std::string place_args(const GpuPlace& p) {
  std::string s = fmt::format(",\"device\":{},\"context\":{},\"stream\":{}", p.device_id,
                              p.context_id, p.stream_id);
  if (p.graph_id != 0 || p.graph_node_id != 0)
    s += fmt::format(",\"graph\":{},\"graph_node\":{}", p.graph_id, p.graph_node_id);
  return s;
}

// An NVTX range: the start marker and, when its end was recorded, the end's time. A range inside
// another on its thread (an op of a forward under emit_nvtx) is an op: its slice says so, and
// flows go from it to the work it launched itself.
struct Range {
  const MarkerRecord* start = nullptr;
  uint64_t end = 0;
  bool closed = false;
  bool op = false;
};

// Where an op's flow starts: its slice's start on its thread.
struct OpStart {
  uint64_t ns = 0;
  uint32_t process_id = 0, thread_id = 0;
};

enum class ItemKind { range, api, kernel, memcpy, memset };

// One record to write, in the order of time; ties keep host before GPU and enclosing before
// enclosed (a range before the calls in it).
struct Item {
  int64_t ts = 0;
  ItemKind kind = ItemKind::api;
  std::size_t process = 0;
  const void* record = nullptr;
  uint64_t sequence = 0;
  uint64_t set = 0;  // the record set's index in its process, shifted above the correlation id
};

struct ProcessIndex {
  std::vector<Range> ranges;
  // The launching call of each correlation id, keyed by set | correlation (a pass's work and its
  // calls come in one set): the innermost when a runtime and a driver call share one.
  std::unordered_map<uint64_t, const ApiRecord*> launches;
  std::unordered_map<uint64_t, OpStart> op_launches;  // set | correlation -> the op that launched it
};

class TimelineWriter {
 public:
  TimelineWriter(std::ostream& out, const std::vector<TimelineProcess>& processes,
                 const TimelineOptions& options)
      : out_(out), processes_(processes), options_(options) {}

  TimelineSummary write() {
    index();
    emit_raw("{\"traceEvents\":[");
    write_metadata();
    for (const Item& item : items_) {
      if (summary_.truncated) break;
      write_item(item);
    }
    if (options_.records_left_out > 0) summary_.truncated = true;
    const std::string left_out =
        options_.records_left_out > 0
            ? fmt::format(",\"records_left_out\":{}", options_.records_left_out)
            : "";
    emit_raw(
        fmt::format("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{{\"generator\":\"sdpa-prof\","
                    "\"clock\":\"CUPTI ns\","
                    "\"zero_ns\":{},\"events\":{},\"max_bytes\":{}{},\"truncated\":{}}}}}\n",
                    zero_, summary_.events, options_.max_bytes, left_out,
                    summary_.truncated ? "true" : "false"));
    return summary_;
  }

 private:
  int64_t shifted(std::size_t process, uint64_t ns) const {
    return static_cast<int64_t>(ns) + processes_[process].clock_offset_ns;
  }
  std::string ts(std::size_t process, uint64_t ns) const {
    return micros(static_cast<uint64_t>(shifted(process, ns) - zero_));
  }
  static std::string dur(uint64_t start, uint64_t end) {
    return micros(end > start ? end - start : 0);
  }

  uint32_t host_pid(std::size_t process, uint32_t recorded) const {
    return recorded != 0 ? recorded : processes_[process].process_id;
  }
  uint32_t gpu_pid(std::size_t process, uint32_t device) const {
    return gpu_pids_.at({process, device});
  }

  void add(std::size_t process, ItemKind kind, uint64_t ns, const void* record, uint64_t set = 0) {
    items_.push_back(Item{shifted(process, ns), kind, process, record, items_.size(), set});
  }

  void index() {
    indexes_.resize(processes_.size());
    for (std::size_t p = 0; p < processes_.size(); ++p) {
      ProcessIndex& ix = indexes_[p];
      std::unordered_map<uint32_t, std::size_t> open;
      for (std::size_t set_index = 0; set_index < processes_[p].record_sets.size(); ++set_index) {
        const ActivityRecords* set = processes_[p].record_sets[set_index];
        const uint64_t in_set = static_cast<uint64_t>(set_index) << 32;
        const RangeTree tree = range_tree(*set);
        std::vector<bool> op_marker(set->markers.size(), false);
        for (const NvtxRange& r : tree.ranges) op_marker[r.marker] = r.depth > 0;
        for (const auto& [correlation, range] : tree.launched_in)
          if (const NvtxRange& r = tree.ranges[range]; r.depth > 0)
            ix.op_launches.emplace(in_set | correlation, OpStart{r.start, r.process_id, r.thread_id});
        for (std::size_t i = 0; i < set->markers.size(); ++i) {
          const MarkerRecord& m = set->markers[i];
          if (m.is_start) {
            open[m.id] = ix.ranges.size();
            ix.ranges.push_back(Range{&m, 0, false, op_marker[i]});
          } else if (auto it = open.find(m.id); it != open.end()) {
            ix.ranges[it->second].end = m.timestamp;
            ix.ranges[it->second].closed = true;
            open.erase(it);
          }
        }
        for (const ApiRecord& a : set->api_calls) {
          cpu_tracks_[host_pid(p, a.process_id)].insert({a.thread_id, p});
          auto [it, fresh] = ix.launches.emplace(in_set | a.correlation, &a);
          if (!fresh && a.start >= it->second->start) it->second = &a;
          add(p, ItemKind::api, a.start, &a);
        }
        const auto gpu = [&](const GpuPlace& place) {
          gpu_pids_.emplace(std::make_pair(p, place.device_id), 0);
          gpu_tracks_[{p, place.device_id}].insert(place.stream_id);
        };
        for (const KernelRecord& k : set->kernels) {
          gpu(k.place);
          add(p, ItemKind::kernel, k.start, &k, in_set);
        }
        for (const MemcpyRecord& m : set->memcpys) {
          gpu(m.place);
          add(p, ItemKind::memcpy, m.start, &m, in_set);
        }
        for (const MemsetRecord& m : set->memsets) {
          gpu(m.place);
          add(p, ItemKind::memset, m.start, &m, in_set);
        }
      }
      for (const Range& r : ix.ranges) {
        cpu_tracks_[host_pid(p, r.start->process_id)].insert({r.start->thread_id, p});
        add(p, ItemKind::range, r.start->timestamp, &r);
      }
    }
    uint32_t next = kGpuPidBase;
    for (auto& [key, pid] : gpu_pids_) pid = next++;
    std::sort(items_.begin(), items_.end(), [](const Item& a, const Item& b) {
      return std::tie(a.ts, a.kind, a.sequence) < std::tie(b.ts, b.kind, b.sequence);
    });
    zero_ = items_.empty() ? 0 : items_.front().ts;
  }

  void write_metadata() {
    for (const auto& [pid, threads] : cpu_tracks_) {
      const std::size_t p = threads.begin()->second;
      metadata("process_name", pid, std::nullopt,
               json_text(fmt::format("{} (pid {})", processes_[p].name, pid)));
      metadata("process_sort_index", pid, std::nullopt, std::to_string(2 * p));
      for (const auto& [tid, owner] : threads)
        metadata("thread_name", pid, tid,
                 json_text(tid != 0 ? fmt::format("thread {}", tid) : "thread unknown"));
    }
    for (const auto& [key, streams] : gpu_tracks_) {
      const auto& [p, device] = key;
      const uint32_t pid = gpu_pid(p, device);
      metadata("process_name", pid, std::nullopt,
               json_text(fmt::format("GPU {}: {} ({})", device, processes_[p].device_name,
                                     processes_[p].name)));
      metadata("process_sort_index", pid, std::nullopt, std::to_string(2 * p + 1));
      for (const uint32_t stream : streams)
        metadata("thread_name", pid, stream, json_text(fmt::format("stream {}", stream)));
    }
  }

  void metadata(const char* what, uint32_t pid, std::optional<uint32_t> tid,
                const std::string& value) {
    const bool sort = std::string_view(what).ends_with("sort_index");
    emit_event(fmt::format("{{\"ph\":\"M\",\"name\":\"{}\",\"pid\":{}{},\"args\":{{\"{}\":{}}}}}",
                           what, pid, tid ? fmt::format(",\"tid\":{}", *tid) : "",
                           sort ? "sort_index" : "name", value));
  }

  void write_item(const Item& item) {
    const std::size_t p = item.process;
    switch (item.kind) {
      case ItemKind::range: {
        const Range& r = *static_cast<const Range*>(item.record);
        const MarkerRecord& m = *r.start;
        std::string args = m.domain.empty() ? "" : fmt::format("\"domain\":{}", json_text(m.domain));
        if (r.op) {
          const OpName op = split_op_name(m.name);
          args += fmt::format("{}\"op\":{}", args.empty() ? "" : ",", json_text(op.name));
          if (!op.shapes.empty()) args += fmt::format(",\"shapes\":{}", json_text(op.shapes));
        }
        const std::string domain = args.empty() ? "" : fmt::format(",\"args\":{{{}}}", args);
        const char* category = r.op ? "op" : "nvtx";
        const std::string where =
            fmt::format("\"pid\":{},\"tid\":{},\"ts\":{}", host_pid(p, m.process_id), m.thread_id,
                        ts(p, m.timestamp));
        // A range whose end was never recorded (the program ended inside it) is an instant.
        const std::string text =
            r.closed ? fmt::format("{{\"ph\":\"X\",\"cat\":\"{}\",\"name\":{},{},\"dur\":{}{}}}", category,
                                   json_text(m.name), where, dur(m.timestamp, r.end), domain)
                     : fmt::format("{{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"{}\",\"name\":{},{}{}}}", category,
                                   json_text(m.name), where, domain);
        if (emit_event(text)) ++summary_.ranges;
        return;
      }
      case ItemKind::api: {
        const ApiRecord& a = *static_cast<const ApiRecord*>(item.record);
        const std::string name =
            a.name.empty() ? fmt::format("{} API call {}", api_kind_name(a.kind), a.callback_id)
                           : a.name;
        const bool written = emit_event(fmt::format(
            "{{\"ph\":\"X\",\"cat\":\"cuda_{}\",\"name\":{},\"pid\":{},\"tid\":{},\"ts\":{},"
            "\"dur\":{},"
            "\"args\":{{\"correlation\":{},\"callback_id\":{}}}}}",
            api_kind_name(a.kind), json_text(name), host_pid(p, a.process_id), a.thread_id,
            ts(p, a.start), dur(a.start, a.end), a.correlation, a.callback_id));
        if (written) ++summary_.api_calls;
        return;
      }
      case ItemKind::kernel: {
        const KernelRecord& k = *static_cast<const KernelRecord*>(item.record);
        const std::string label = options_.kernel_label ? options_.kernel_label(k.name) : k.name;
        write_gpu(
            item, k.place, k.start, k.end, k.correlation, "kernel", label,
            fmt::format(
                "\"kernel\":{},\"grid\":{},\"block\":{},\"cluster\":{},\"registers_per_thread\":{},"
                "\"static_shared_bytes\":{},\"dynamic_shared_bytes\":{},\"launch_type\":{}",
                json_text(k.name), dims(k.grid), dims(k.block), dims(k.cluster),
                k.registers_per_thread, k.static_shared, k.dynamic_shared,
                json_text(k.launch_type)),
            summary_.kernels);
        return;
      }
      case ItemKind::memcpy: {
        const MemcpyRecord& m = *static_cast<const MemcpyRecord*>(item.record);
        write_gpu(item, m.place, m.start, m.end, m.correlation, "memcpy", "Memcpy " + m.kind,
                  fmt::format("\"kind\":{},\"bytes\":{}", json_text(m.kind), m.bytes),
                  summary_.memcpys);
        return;
      }
      case ItemKind::memset: {
        const MemsetRecord& m = *static_cast<const MemsetRecord*>(item.record);
        write_gpu(item, m.place, m.start, m.end, m.correlation, "memset", "Memset",
                  fmt::format("\"bytes\":{}", m.bytes), summary_.memsets);
        return;
      }
    }
  }

  // The work's slice and, when its launching call was recorded, the flow from that call to it:
  // written together, so that a cap never leaves half a flow.
  void write_gpu(const Item& item, const GpuPlace& place, uint64_t start, uint64_t end,
                 uint32_t correlation, const char* category, const std::string& name,
                 const std::string& args, uint64_t& count) {
    const std::size_t p = item.process;
    const uint32_t pid = gpu_pid(p, place.device_id);
    std::string text = fmt::format(
        "{{\"ph\":\"X\",\"cat\":\"{}\",\"name\":{},\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},"
        "\"args\":{{{},"
        "\"correlation\":{}{}}}}}",
        category, json_text(name), pid, place.stream_id, ts(p, start), dur(start, end), args,
        correlation, place_args(place));
    uint64_t events = 1;
    const auto launch = indexes_[p].launches.find(item.set | correlation);
    const bool flow = launch != indexes_[p].launches.end() && launch->second->start <= start;
    if (flow) {
      const ApiRecord& a = *launch->second;
      const uint64_t id = summary_.flows + 1;
      text += fmt::format(
          ",\n{{\"ph\":\"s\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":{},\"pid\":{},\"tid\":{}"
          ",\"ts\":{}}}"
          ",\n{{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":{},\"pid\":"
          "{},\"tid\":{},"
          "\"ts\":{}}}",
          id, host_pid(p, a.process_id), a.thread_id, ts(p, a.start), id, pid, place.stream_id,
          ts(p, start));
      events = 3;
    }
    const auto op = indexes_[p].op_launches.find(item.set | correlation);
    const bool op_flow = op != indexes_[p].op_launches.end() && op->second.ns <= start;
    if (op_flow) {
      const OpStart& o = op->second;
      const uint64_t id = summary_.flows + (flow ? 2 : 1);
      text += fmt::format(
          ",\n{{\"ph\":\"s\",\"cat\":\"op\",\"name\":\"op launch\",\"id\":{},\"pid\":{},\"tid\":{},\"ts\":{}}}"
          ",\n{{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"op\",\"name\":\"op launch\",\"id\":{},\"pid\":{},\"tid\":{},"
          "\"ts\":{}}}",
          id, host_pid(p, o.process_id), o.thread_id, ts(p, o.ns), id, pid, place.stream_id, ts(p, start));
      events += 2;
    }
    if (emit_event(text, events)) {
      ++count;
      summary_.flows += (flow ? 1 : 0) + (op_flow ? 1 : 0);
      if (op_flow) ++summary_.op_flows;
    }
  }

  // Writes one event (or a group that must stay whole); false once the cap is reached.
  bool emit_event(const std::string& text, uint64_t events = 1) {
    if (summary_.truncated) return false;
    const std::string_view separator = summary_.events == 0 ? "\n" : ",\n";
    if (summary_.bytes + separator.size() + text.size() + kTrailerBytes > options_.max_bytes) {
      summary_.truncated = true;
      return false;
    }
    emit_raw(separator);
    emit_raw(text);
    summary_.events += events;
    return true;
  }

  void emit_raw(std::string_view text) {
    out_.write(text.data(), static_cast<std::streamsize>(text.size()));
    summary_.bytes += text.size();
  }

  std::ostream& out_;
  const std::vector<TimelineProcess>& processes_;
  const TimelineOptions& options_;
  std::vector<ProcessIndex> indexes_;
  std::vector<Item> items_;
  // pid -> (tid, owning process): the CPU tracks; (process, device) -> pid, and its streams.
  std::map<uint32_t, std::map<uint32_t, std::size_t>> cpu_tracks_;
  std::map<std::pair<std::size_t, uint32_t>, uint32_t> gpu_pids_;
  std::map<std::pair<std::size_t, uint32_t>, std::set<uint32_t>> gpu_tracks_;
  int64_t zero_ = 0;
  TimelineSummary summary_;
};

}  // namespace

TimelineSummary write_timeline(std::ostream& out, const std::vector<TimelineProcess>& processes,
                               const TimelineOptions& options) {
  TimelineOptions capped = options;
  capped.max_bytes = std::max(options.max_bytes, kTimelineMinBytes);
  return TimelineWriter(out, processes, capped).write();
}

}  // namespace sdpa
