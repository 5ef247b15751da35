#include "report/report_json_trace.h"

namespace sdpa {

using nlohmann::json;

json trace_to_json(const TraceInfo& t) {
  json processes = json::array();
  for (const ProcessTrace& p : t.processes) {
    json ranges = json::array();
    for (const RangeActivity& r : p.outside_cases)
      ranges.push_back({{"range", r.name.empty() ? json(nullptr) : json(r.name)},
                        {"kernels", r.kernels},
                        {"memcpys", r.memcpys},
                        {"memsets", r.memsets},
                        {"kernel_us", r.kernel_us}});
    processes.push_back({{"pid", p.pid},
                         {"cupti", p.cupti},
                         {"partial", p.partial},
                         {"partial_reason", p.partial_reason},
                         {"kernels", p.kernels},
                         {"memcpys", p.memcpys},
                         {"memsets", p.memsets},
                         {"dropped", p.dropped},
                         {"records_left_out", p.records_left_out},
                         {"cases", p.cases},
                         {"outside_cases", ranges}});
  }
  return {{"command", t.command}, {"exit_code", t.exit_code}, {"processes", processes}};
}

TraceInfo trace_from_json(const JsonFields& j) {
  TraceInfo t;
  t.command = j.text("command");
  t.exit_code = static_cast<int>(j.integer("exit_code", 0, 255));
  const json& processes = j.array("processes");
  for (std::size_t i = 0; i < processes.size(); ++i) {
    const JsonFields p(processes[i], element_path(j.path("processes"), i));
    ProcessTrace pt;
    pt.pid = p.integer("pid", 0);
    pt.cupti = p.text("cupti");
    pt.partial = p.boolean("partial");
    pt.partial_reason = p.text("partial_reason");
    pt.kernels = p.unsigned_integer("kernels");
    pt.memcpys = p.unsigned_integer("memcpys");
    pt.memsets = p.unsigned_integer("memsets");
    pt.dropped = p.unsigned_integer("dropped");
    pt.records_left_out = p.unsigned_integer("records_left_out");
    pt.cases = static_cast<int>(p.integer("cases", 0, INT32_MAX));
    const json& ranges = p.array("outside_cases");
    for (std::size_t k = 0; k < ranges.size(); ++k) {
      const JsonFields r(ranges[k], element_path(p.path("outside_cases"), k));
      pt.outside_cases.push_back(RangeActivity{
          r.raw("range").is_null() ? "" : r.text("range"), r.unsigned_integer("kernels"),
          r.unsigned_integer("memcpys"), r.unsigned_integer("memsets"), r.number("kernel_us", 0)});
    }
    t.processes.push_back(std::move(pt));
  }
  return t;
}

}  // namespace sdpa
