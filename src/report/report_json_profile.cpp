#include "report/report_json_profile.h"

#include <cstdint>

#include <fmt/format.h>

#include "report/report_json_counters.h"


namespace sdpa {
namespace {

using nlohmann::json;

json dim3_to_json(const Dim3& d) { return json::array({d.x, d.y, d.z}); }

Dim3 dim3_from_json(const JsonFields& parent, std::string_view key, int64_t low = 1) {
  const json& j = parent.array(key);
  const auto item = [&](std::size_t i) {
    if (j.size() != 3 || !j[i].is_number_integer() || j[i].get<int64_t>() < low || j[i].get<int64_t>() > INT32_MAX)
      parent.fail(key, fmt::format("[x, y, z] of integers >= {}", low));
    return static_cast<int>(j[i].get<int64_t>());
  };
  return Dim3{item(0), item(1), item(2)};
}

json occupancy_to_json(const OccupancyEstimate& o) {
  return json{{"theoretical", o.theoretical},
              {"blocks_per_sm", o.blocks_per_sm},
              {"limited_by", limiter_names(o.limiters)},
              {"block_limits",
               {{"registers", o.block_limit_registers},
                {"shared_memory", o.block_limit_shared_memory},
                {"warps", o.block_limit_warps},
                {"blocks", o.block_limit_blocks}}},
              {"profiler_style", o.profiler_style}};
}

OccupancyEstimate occupancy_from_json(const JsonFields& j) {
  OccupancyEstimate o;
  o.theoretical = j.number("theoretical", 0, 1);
  o.blocks_per_sm = static_cast<int>(j.integer("blocks_per_sm", 0, 4096));
  const json& names = j.array("limited_by");
  for (const json& name : names) {
    const unsigned flag = name.is_string() ? limiter_flag(name.get<std::string>()) : 0;
    if (flag == 0) j.fail("limited_by", "registers, shared memory, warps, blocks or barriers");
    o.limiters |= flag;
  }
  const JsonFields limits = j.object("block_limits");
  o.block_limit_registers = static_cast<int>(limits.integer("registers", 0, INT32_MAX));
  o.block_limit_shared_memory = static_cast<int>(limits.integer("shared_memory", 0, INT32_MAX));
  o.block_limit_warps = static_cast<int>(limits.integer("warps", 0, INT32_MAX));
  o.block_limit_blocks = static_cast<int>(limits.integer("blocks", 0, INT32_MAX));
  o.profiler_style = j.number("profiler_style", 0, 1);
  return o;
}

json kernel_to_json(const KernelProfile& k) {
  return json{{"name", k.name},
              {"full_name", k.full_name},
              {"category", category_id(k.category)},
              {"per_forward", k.per_forward},
              {"mean_us", k.mean_us},
              {"grid", dim3_to_json(k.grid)},
              {"block", dim3_to_json(k.block)},
              {"cluster", dim3_to_json(k.cluster)},
              {"registers_per_thread", k.registers_per_thread},
              {"static_shared_bytes", k.static_shared},
              {"dynamic_shared_bytes", k.dynamic_shared},
              {"shared_config_bytes", k.shared_config},
              {"launch_type", k.launch_type},
              {"occupancy", k.occupancy ? occupancy_to_json(*k.occupancy) : json(nullptr)},
              {"counters", counters_to_json(k.counters)}};
}

KernelProfile kernel_from_json(const JsonFields& j) {
  KernelProfile k;
  k.name = j.text("name");
  k.full_name = j.text("full_name");
  if (!parse_category_id(j.text("category"), k.category)) k.category = KernelCategory::other;
  k.per_forward = j.number("per_forward", 0, 1e9);
  k.mean_us = j.number("mean_us", 0, 1e12);
  k.grid = dim3_from_json(j, "grid");
  k.block = dim3_from_json(j, "block");
  k.cluster = dim3_from_json(j, "cluster", 0);  // 0 x 0 x 0: launched without a cluster
  k.registers_per_thread = static_cast<int>(j.integer("registers_per_thread", 0, 65536));
  k.static_shared = static_cast<int>(j.integer("static_shared_bytes", 0, INT32_MAX));
  k.dynamic_shared = static_cast<int>(j.integer("dynamic_shared_bytes", 0, INT32_MAX));
  k.shared_config = static_cast<int>(j.integer("shared_config_bytes", 0, INT32_MAX));
  k.launch_type = j.text("launch_type");
  if (!j.raw("occupancy").is_null()) k.occupancy = occupancy_from_json(j.object("occupancy"));
  if (j.has("counters")) k.counters = counters_from_json(j.object("counters"));  // schema 5
  return k;
}

constexpr double kMaxPerForward = 1e9;  // calls or launches of one op in one forward
constexpr double kMaxUs = 3.6e9;        // an hour

json ops_to_json(const OpsProfile& o) {
  json rows = json::array();
  for (const OpProfile& op : o.ops)
    rows.push_back({{"name", op.name},
                    {"shapes", op.shapes},
                    {"parent", op.parent},
                    {"depth", op.depth},
                    {"calls_per_forward", op.calls},
                    {"cpu_total_us", op.total_us},
                    {"cpu_self_us", op.self_us},
                    {"kernels", op.kernels},
                    {"memcpys", op.memcpys},
                    {"memsets", op.memsets}});
  return json{{"host_us", o.host_us},
              {"launch_api_us", o.launch_api_us},
              {"launches_outside_ops", o.launches_outside_ops},
              {"unclosed_ranges", o.unclosed},
              {"ops", rows}};
}

// The call tree is checked as well as the numbers: a parent comes before its children, and a
// child sits one level under it.
OpsProfile ops_from_json(const JsonFields& j) {
  OpsProfile o;
  o.host_us = j.number("host_us", 0, kMaxUs);
  o.launch_api_us = j.number("launch_api_us", 0, kMaxUs);
  o.launches_outside_ops = j.number("launches_outside_ops", 0, kMaxPerForward);
  o.unclosed = static_cast<int>(j.integer("unclosed_ranges", 0, INT32_MAX));
  const json& rows = j.array("ops");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const JsonFields r(rows[i], element_path(j.path("ops"), i));
    OpProfile op;
    op.name = r.text("name");
    const json& shapes = r.array("shapes");
    if (shapes.size() > kMaxOpShapes) r.fail("shapes", fmt::format("at most {} shapes", kMaxOpShapes));
    for (const json& s : shapes) {
      if (!s.is_string()) r.fail("shapes", "strings");
      op.shapes.push_back(s.get<std::string>());
    }
    op.parent = static_cast<int>(r.integer("parent", -1, static_cast<int64_t>(i) - 1));
    const int depth = op.parent < 0 ? 0 : o.ops[static_cast<std::size_t>(op.parent)].depth + 1;
    op.depth = static_cast<int>(r.integer("depth", depth, depth));
    op.calls = r.number("calls_per_forward", 0, kMaxPerForward);
    op.total_us = r.number("cpu_total_us", 0, kMaxUs);
    op.self_us = r.number("cpu_self_us", 0, op.total_us);
    op.kernels = r.number("kernels", 0, kMaxPerForward);
    op.memcpys = r.number("memcpys", 0, kMaxPerForward);
    op.memsets = r.number("memsets", 0, kMaxPerForward);
    o.ops.push_back(std::move(op));
  }
  return o;
}

}  // namespace

json profile_to_json(const CaseProfile& p) {
  json forwards = json::array();
  for (const ForwardProfile& f : p.forwards)
    forwards.push_back({{"kernels", f.kernels},
                        {"memcpys", f.memcpys},
                        {"memcpy_bytes", f.memcpy_bytes},
                        {"memsets", f.memsets},
                        {"kernel_us", f.kernel_us},
                        {"wall_us", f.wall_us}});
  json kernels = json::array();
  for (const KernelProfile& k : p.kernels) kernels.push_back(kernel_to_json(k));
  json memcpys = json::array();
  for (const MemcpyProfile& m : p.memcpys)
    memcpys.push_back({{"kind", m.kind},
                       {"per_forward", m.per_forward},
                       {"bytes_per_forward", m.bytes_per_forward},
                       {"mean_us", m.mean_us}});
  json findings = json::array();
  for (const Finding& f : p.findings) findings.push_back({{"rule", f.rule}, {"text", f.text}});
  return json{{"kernels_per_forward", p.kernels_per_forward()},
              {"memcpys_per_forward", p.memcpys_per_forward()},
              {"forwards", forwards},
              {"kernels", kernels},
              {"memcpys", memcpys},
              {"dropped_records", p.dropped_records},
              {"unattributed_records", p.unattributed},
              {"nvtx_ranges", p.nvtx_ranges},
              {"counters_source", p.counters ? counter_source_to_json(*p.counters) : json(nullptr)},
              {"counters_skipped", p.counters_skipped},
              {"findings", findings},
              {"ops", p.ops ? ops_to_json(*p.ops) : json(nullptr)}};
}

CaseProfile profile_from_json(const JsonFields& j) {
  const auto each = [&](std::string_view key, const auto& read) {
    const json& items = j.array(key);
    for (std::size_t i = 0; i < items.size(); ++i) read(JsonFields(items[i], element_path(j.path(key), i)));
  };
  CaseProfile p;
  each("forwards", [&](const JsonFields& f) {
    p.forwards.push_back(ForwardProfile{static_cast<int>(f.integer("kernels", 0, INT32_MAX)),
                                        static_cast<int>(f.integer("memcpys", 0, INT32_MAX)),
                                        f.unsigned_integer("memcpy_bytes"),
                                        static_cast<int>(f.integer("memsets", 0, INT32_MAX)),
                                        f.number("kernel_us", 0), f.number("wall_us", 0)});
  });
  each("kernels", [&](const JsonFields& k) { p.kernels.push_back(kernel_from_json(k)); });
  each("memcpys", [&](const JsonFields& m) {
    p.memcpys.push_back(MemcpyProfile{m.text("kind"), m.number("per_forward", 0), m.number("bytes_per_forward", 0),
                                      m.number("mean_us", 0)});
  });
  p.dropped_records = j.unsigned_integer("dropped_records");
  p.unattributed = j.unsigned_integer("unattributed_records");
  p.nvtx_ranges = static_cast<int>(j.integer("nvtx_ranges", 0, INT32_MAX));
  each("findings", [&](const JsonFields& f) { p.findings.push_back(Finding{f.text("rule"), f.text("text")}); });
  if (j.has("counters_source") && !j.raw("counters_source").is_null())  // schema 5
    p.counters = counter_source_from_json(j.object("counters_source"));
  p.counters_skipped = j.text_or("counters_skipped", "");
  if (j.has("ops") && !j.raw("ops").is_null()) p.ops = ops_from_json(j.object("ops"));  // schema 6
  return p;
}

json host_cost_to_json(const HostCost& h) {
  return json{{"setup_ms", h.setup_ms}, {"first_call_us", h.first_call_us}, {"per_call_us", h.per_call_us},
              {"calls", h.calls}};
}

HostCost host_cost_from_json(const JsonFields& j) {
  return HostCost{j.number("setup_ms", 0), j.number("first_call_us", 0), j.number("per_call_us", 0),
                  static_cast<int>(j.integer("calls", 0, INT32_MAX))};
}

}  // namespace sdpa
