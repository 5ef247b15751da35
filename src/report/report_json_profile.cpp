#include "report/report_json_profile.h"

#include <stdexcept>

#include "report/json_integer.h"

namespace sdpa {
namespace {

using nlohmann::json;

json dim3_to_json(const Dim3& d) { return json::array({d.x, d.y, d.z}); }

Dim3 dim3_from_json(const json& j, const char* key) {
  return Dim3{integer_of<int>(j.at(0), key), integer_of<int>(j.at(1), key), integer_of<int>(j.at(2), key)};
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

OccupancyEstimate occupancy_from_json(const json& j) {
  OccupancyEstimate o;
  o.theoretical = j.at("theoretical").get<double>();
  o.blocks_per_sm = integer_at<int>(j, "blocks_per_sm");
  for (const json& name : j.at("limited_by")) {
    const unsigned flag = limiter_flag(name.get<std::string>());
    if (flag == 0) throw std::invalid_argument("unknown occupancy limiter \"" + name.get<std::string>() + "\"");
    o.limiters |= flag;
  }
  const json& limits = j.at("block_limits");
  o.block_limit_registers = integer_at<int>(limits, "registers");
  o.block_limit_shared_memory = integer_at<int>(limits, "shared_memory");
  o.block_limit_warps = integer_at<int>(limits, "warps");
  o.block_limit_blocks = integer_at<int>(limits, "blocks");
  o.profiler_style = j.at("profiler_style").get<double>();
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
              {"occupancy", k.occupancy ? occupancy_to_json(*k.occupancy) : json(nullptr)}};
}

KernelProfile kernel_from_json(const json& j) {
  KernelProfile k;
  k.name = j.at("name").get<std::string>();
  k.full_name = j.at("full_name").get<std::string>();
  if (!parse_category_id(j.at("category").get<std::string>(), k.category)) k.category = KernelCategory::other;
  k.per_forward = j.at("per_forward").get<double>();
  k.mean_us = j.at("mean_us").get<double>();
  k.grid = dim3_from_json(j.at("grid"), "grid");
  k.block = dim3_from_json(j.at("block"), "block");
  k.cluster = dim3_from_json(j.at("cluster"), "cluster");
  k.registers_per_thread = integer_at<int>(j, "registers_per_thread");
  k.static_shared = integer_at<int>(j, "static_shared_bytes");
  k.dynamic_shared = integer_at<int>(j, "dynamic_shared_bytes");
  k.shared_config = integer_at<int>(j, "shared_config_bytes");
  k.launch_type = j.at("launch_type").get<std::string>();
  if (!j.at("occupancy").is_null()) k.occupancy = occupancy_from_json(j["occupancy"]);
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
              {"findings", findings}};
}

CaseProfile profile_from_json(const json& j) {
  CaseProfile p;
  for (const json& f : j.at("forwards"))
    p.forwards.push_back(ForwardProfile{integer_at<int>(f, "kernels"), integer_at<int>(f, "memcpys"),
                                        integer_at<uint64_t>(f, "memcpy_bytes"), integer_at<int>(f, "memsets"),
                                        f.at("kernel_us").get<double>(), f.at("wall_us").get<double>()});
  for (const json& k : j.at("kernels")) p.kernels.push_back(kernel_from_json(k));
  for (const json& m : j.at("memcpys"))
    p.memcpys.push_back(MemcpyProfile{m.at("kind").get<std::string>(), m.at("per_forward").get<double>(),
                                      m.at("bytes_per_forward").get<double>(), m.at("mean_us").get<double>()});
  p.dropped_records = integer_at<uint64_t>(j, "dropped_records");
  p.unattributed = integer_at<uint64_t>(j, "unattributed_records");
  p.nvtx_ranges = integer_at<int>(j, "nvtx_ranges");
  for (const json& f : j.at("findings"))
    p.findings.push_back(Finding{f.at("rule").get<std::string>(), f.at("text").get<std::string>()});
  return p;
}

json host_cost_to_json(const HostCost& h) {
  return json{{"setup_ms", h.setup_ms}, {"first_call_us", h.first_call_us}, {"per_call_us", h.per_call_us},
              {"calls", h.calls}};
}

HostCost host_cost_from_json(const json& j) {
  return HostCost{j.at("setup_ms").get<double>(), j.at("first_call_us").get<double>(),
                  j.at("per_call_us").get<double>(), integer_at<int>(j, "calls")};
}

}  // namespace sdpa
