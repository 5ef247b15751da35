#include "io/record_file.h"

#include <cstdio>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/input_file.h"
#include "io/json_input.h"
#include "model/errors.h"

namespace sdpa {
namespace {

using nlohmann::json;

constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();

std::string line_of(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

json dim_json(const Dim3& d) {
  return json::array({d.x, d.y, d.z});
}

Dim3 dim_from(const JsonFields& j, std::string_view key) {
  const json& a = j.array(key);
  if (a.size() != 3) j.fail(key, "an array of 3 sizes");
  Dim3 d;
  int* fields[] = {&d.x, &d.y, &d.z};
  for (std::size_t i = 0; i < 3; ++i) {
    if (!a[i].is_number_integer() || a[i].get<int64_t>() < 0 || a[i].get<int64_t>() > kMaxDim)
      j.fail(key, "sizes from 0 to 2^31-1");
    *fields[i] = static_cast<int>(a[i].get<int64_t>());
  }
  return d;
}

json place_json(const GpuPlace& p) {
  return json::array({p.device_id, p.context_id, p.stream_id, p.graph_id, p.graph_node_id});
}

// [device, context, stream, graph, graph node]; absent: all 0.
GpuPlace place_from(const JsonFields& j) {
  GpuPlace p;
  if (!j.has("place")) return p;
  const json& a = j.array("place");
  if (a.size() != 5) j.fail("place", "an array of 5 ids");
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!a[i].is_number_unsigned() ||
        (i < 4 && a[i].get<uint64_t>() > std::numeric_limits<uint32_t>::max()))
      j.fail("place", "ids from 0 to 2^32-1 (the graph node's to 2^64-1)");
  p.device_id = a[0].get<uint32_t>();
  p.context_id = a[1].get<uint32_t>();
  p.stream_id = a[2].get<uint32_t>();
  p.graph_id = a[3].get<uint32_t>();
  p.graph_node_id = a[4].get<uint64_t>();
  return p;
}

uint32_t u32_or(const JsonFields& j, std::string_view key) {
  return static_cast<uint32_t>(j.integer_or(key, 0, 0, std::numeric_limits<uint32_t>::max()));
}

uint32_t u32(const JsonFields& j, std::string_view key) {
  return static_cast<uint32_t>(j.integer(key, 0, std::numeric_limits<uint32_t>::max()));
}
int i32(const JsonFields& j, std::string_view key) {
  return static_cast<int>(j.integer(key, 0, kMaxDim));
}

// A start..end pair from CUPTI's clock: end before start is not a record.
void times_from(const JsonFields& j, uint64_t& start, uint64_t& end) {
  start = j.unsigned_integer("start");
  end = j.unsigned_integer("end");
  if (end < start) j.fail("end", fmt::format("a time at or after start ({})", start));
}

KernelRecord kernel_from(const JsonFields& j) {
  KernelRecord k;
  k.name = j.text("name");
  times_from(j, k.start, k.end);
  k.correlation = u32(j, "correlation");
  k.grid = dim_from(j, "grid");
  k.block = dim_from(j, "block");
  k.cluster = dim_from(j, "cluster");
  k.registers_per_thread = i32(j, "registers");
  k.static_shared = i32(j, "static_shared");
  k.dynamic_shared = i32(j, "dynamic_shared");
  k.shared_config = i32(j, "shared_config");
  k.launch_type = j.text("launch_type");
  k.place = place_from(j);
  return k;
}

// One line into `file`; returns false at the end line.
bool read_line(const json& line, RecordFile& file, std::size_t max_records, std::size_t& kept) {
  const JsonFields j(line, "record");
  if (!line.is_object() || line.size() != 1) throw InputError("a record is an object with one key");
  const std::string kind = line.begin().key();
  if (kind == "end") return false;
  if (kind == "dropped") {
    file.records.dropped += j.unsigned_integer("dropped");
    return true;
  }
  if (kind == "error") {
    const JsonFields e = j.object("error");
    file.error_code = e.text("code");
    file.error = e.text("message");
    return true;
  }
  if (kept >= max_records) {
    ++file.records_left_out;
    return true;
  }
  const JsonFields r = j.object(kind);
  ActivityRecords& a = file.records;
  if (kind == "kernel") {
    a.kernels.push_back(kernel_from(r));
  } else if (kind == "memcpy") {
    MemcpyRecord m{r.text("kind"), r.unsigned_integer("bytes"), 0, 0, u32(r, "correlation"),
                   place_from(r)};
    times_from(r, m.start, m.end);
    a.memcpys.push_back(m);
  } else if (kind == "memset") {
    MemsetRecord m{r.unsigned_integer("bytes"), 0, 0, u32(r, "correlation"), place_from(r)};
    times_from(r, m.start, m.end);
    a.memsets.push_back(m);
  } else if (kind == "api") {
    ApiRecord c;
    c.correlation = u32(r, "correlation");
    times_from(r, c.start, c.end);
    const std::string api_kind = r.text_or("kind", "runtime");
    if (api_kind != "runtime" && api_kind != "driver") r.fail("kind", "runtime or driver");
    c.kind = api_kind == "driver" ? ApiKind::driver : ApiKind::runtime;
    c.callback_id = u32_or(r, "callback_id");
    c.name = r.text_or("name", "");
    c.process_id = u32_or(r, "pid");
    c.thread_id = u32_or(r, "tid");
    a.api_calls.push_back(c);
  } else if (kind == "marker") {
    a.markers.push_back(MarkerRecord{u32(r, "id"), r.unsigned_integer("timestamp"),
                                     r.boolean("start"), r.text("name"), r.text_or("domain", ""),
                                     u32_or(r, "pid"), u32_or(r, "tid")});
  } else {
    return true;  // a kind a later version writes: not ours to read
  }
  ++kept;
  return true;
}

}  // namespace

std::string record_file_header(int64_t pid, const std::string& cupti) {
  return line_of({{"schema", kRecordFileSchema},
                  {"schema_version", kRecordFileVersion},
                  {"pid", pid},
                  {"cupti", cupti}});
}

std::string record_line(const KernelRecord& k) {
  return line_of({{"kernel",
                   {{"name", k.name},
                    {"start", k.start},
                    {"end", k.end},
                    {"correlation", k.correlation},
                    {"grid", dim_json(k.grid)},
                    {"block", dim_json(k.block)},
                    {"cluster", dim_json(k.cluster)},
                    {"registers", k.registers_per_thread},
                    {"static_shared", k.static_shared},
                    {"dynamic_shared", k.dynamic_shared},
                    {"shared_config", k.shared_config},
                    {"launch_type", k.launch_type},
                    {"place", place_json(k.place)}}}});
}

std::string record_line(const MemcpyRecord& m) {
  return line_of({{"memcpy",
                   {{"kind", m.kind},
                    {"bytes", m.bytes},
                    {"start", m.start},
                    {"end", m.end},
                    {"correlation", m.correlation},
                    {"place", place_json(m.place)}}}});
}

std::string record_line(const MemsetRecord& m) {
  return line_of({{"memset",
                   {{"bytes", m.bytes},
                    {"start", m.start},
                    {"end", m.end},
                    {"correlation", m.correlation},
                    {"place", place_json(m.place)}}}});
}

std::string record_line(const ApiRecord& a) {
  return line_of({{"api",
                   {{"start", a.start},
                    {"end", a.end},
                    {"correlation", a.correlation},
                    {"kind", api_kind_name(a.kind)},
                    {"callback_id", a.callback_id},
                    {"name", a.name},
                    {"pid", a.process_id},
                    {"tid", a.thread_id}}}});
}

std::string record_line(const MarkerRecord& m) {
  return line_of({{"marker",
                   {{"id", m.id},
                    {"timestamp", m.timestamp},
                    {"start", m.is_start},
                    {"name", m.name},
                    {"domain", m.domain},
                    {"pid", m.process_id},
                    {"tid", m.thread_id}}}});
}

std::string dropped_line(uint64_t dropped) {
  return line_of({{"dropped", dropped}});
}

std::string error_line(const std::string& code, const std::string& message) {
  return line_of({{"error", {{"code", code}, {"message", message}}}});
}

std::string end_line() {
  return line_of({{"end", json::object()}});
}

RecordFile read_record_file(const std::string& path, std::size_t max_records) {
  const InputFile in = open_regular_file(path);
  RecordFile file;
  std::string line;
  std::size_t number = 0, kept = 0;
  // A line longer than the writer ever writes, or one cut short by the end of the file.
  const auto next_line = [&]() -> int {
    line.clear();
    for (int c; (c = std::getc(in.get())) != EOF;) {
      if (c == '\n') return 1;
      if (line.size() >= kMaxRecordLine) return -1;
      line.push_back(static_cast<char>(c));
    }
    return line.empty() ? 0 : -1;
  };
  const int first = next_line();
  if (first != 1)
    throw InputError(fmt::format("{}: not a trace record file (no header line)", path));
  try {
    const json header = parse_untrusted_json(line, path);
    const JsonFields h(header, "header");
    if (!header.is_object() || h.text_or("schema", "") != kRecordFileSchema)
      throw InputError(
          fmt::format("not a trace record file (schema is not \"{}\")", kRecordFileSchema));
    const int64_t version = h.integer("schema_version", 1);
    if (version > kRecordFileVersion)
      throw InputError(fmt::format("record file version {} is newer than this tool reads ({})",
                                   version, kRecordFileVersion));
    file.pid = h.integer("pid", 0);
    file.cupti = h.text("cupti");
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", path, e.what()));
  }
  for (number = 2;; ++number) {
    const int got = next_line();
    if (got == 0) {
      file.partial_reason =
          "the process ended before its records were closed (os._exit, a crash or a signal)";
      break;
    }
    if (got < 0) {
      file.partial_reason = fmt::format("line {} is cut short", number);
      break;
    }
    try {
      if (!read_line(parse_untrusted_json(line, path), file, max_records, kept)) {
        file.complete = true;
        break;
      }
    } catch (const InputError& e) {
      file.partial_reason = fmt::format("line {}: {}", number, e.what());
      break;
    }
  }
  if (file.complete && next_line() != 0) {
    file.complete = false;
    file.partial_reason = fmt::format("line {}: records after the end line", number + 1);
  }
  return file;
}

}  // namespace sdpa
