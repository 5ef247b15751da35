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
              {"findings", findings}};
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
