#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/ceilings_file.h"
#include "io/preset.h"
#include "model/axes.h"
#include "model/errors.h"
#include "report/json_integer.h"
#include "report/report.h"
#include "report/report_json_profile.h"

namespace sdpa {
namespace {

using nlohmann::json;

json device_to_json(const DeviceInfo& d) {
  return json{{"name", d.name},
              {"uuid", d.uuid},
              {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
              {"sm_count", d.sm_count},
              {"memory_bytes", d.total_memory},
              {"l2_bytes", d.l2_bytes},
              {"shared_per_block_optin_bytes", d.shared_per_block_optin},
              {"sm_clock_peak_mhz", d.sm_clock_khz / 1000},
              {"ecc_enabled", d.ecc_enabled},
              {"driver_version", version_text(d.driver_version)},
              {"cuda_runtime_version", version_text(d.runtime_version)},
              {"cublas_version", d.cublas_version},
              {"cudnn_version", d.cudnn_version == 0 ? json(nullptr) : json(d.cudnn_version)}};
}

DeviceInfo device_from_json(const json& j) {
  DeviceInfo d;
  d.name = j.at("name").get<std::string>();
  d.uuid = j.value("uuid", "");
  const std::string cc = j.at("compute_capability").get<std::string>();
  if (std::sscanf(cc.c_str(), "%3d.%3d", &d.cc_major, &d.cc_minor) != 2)
    throw std::invalid_argument("compute_capability is not MAJOR.MINOR");
  d.sm_count = integer_at<int>(j, "sm_count");
  d.total_memory = integer_at<std::size_t>(j, "memory_bytes");
  d.l2_bytes = integer_or(j, "l2_bytes", std::size_t{0});
  d.shared_per_block_optin = integer_or(j, "shared_per_block_optin_bytes", std::size_t{0});
  const auto parse_version = [](const std::string& text) {
    int major = 0;
    int minor = 0;
    std::sscanf(text.c_str(), "%5d.%5d", &major, &minor);  // widths: no overflow below
    return major * 1000 + minor * 10;
  };
  d.sm_clock_khz = 1000 * integer_or(j, "sm_clock_peak_mhz", 0, 0, 1000000);
  d.ecc_enabled = j.value("ecc_enabled", false);
  d.driver_version = parse_version(j.at("driver_version").get<std::string>());
  d.runtime_version = parse_version(j.at("cuda_runtime_version").get<std::string>());
  d.cublas_version = integer_or(j, "cublas_version", 0);
  d.cudnn_version = j.at("cudnn_version").is_null() ? 0 : integer_at<std::size_t>(j, "cudnn_version");
  return d;
}

json problem_to_json(const Problem& p) {
  json j;
  for (const AxisSpec& a : axis_table()) j[a.result_key()] = axis_value_to_json(a.read(p));
  j["flops"] = p.flops();
  j["min_bytes"] = p.min_bytes();
  return j;
}

Problem problem_from_json(const json& j) {
  Problem p;
  for (const AxisSpec& a : axis_table()) {
    if (!j.contains(a.result_key())) {
      if (a.defaults.empty()) continue;
      throw InputError(fmt::format("a case's problem has no \"{}\"", a.result_key()));
    }
    a.apply(p, axis_value_from_json(a, j[a.result_key()], "a case's problem: "));
  }
  if (!p.sizes_in_range())
    throw InputError(
        fmt::format("a case's problem {} has more than 2^53 elements in one tensor", p.shape_label()));
  return p;
}

json timing_to_json(const TimingStats& t) {
  return json{{"warmup", t.warmup},
              {"samples", t.samples},
              {"median_ms", t.median_ms},
              {"mean_ms", t.mean_ms},
              {"min_ms", t.min_ms},
              {"max_ms", t.max_ms},
              {"q1_ms", t.q1_ms},
              {"q3_ms", t.q3_ms},
              {"relative_spread", t.relative_spread},
              {"converged", t.converged},
              {"cold_cache", t.cold_cache},
              {"throttled_dropped", t.throttled_dropped},
              {"sm_clock_mhz", t.sm_clock_mhz}};
}

TimingStats timing_from_json(const json& t) {
  TimingStats s;
  s.warmup = integer_at<int>(t, "warmup");
  s.samples = integer_at<int>(t, "samples");
  s.median_ms = t.at("median_ms").get<double>();
  s.min_ms = t.at("min_ms").get<double>();
  s.max_ms = t.at("max_ms").get<double>();
  // Schema 3 added the rest; older results leave them at their "unknown" defaults.
  s.mean_ms = t.value("mean_ms", 0.0);
  s.q1_ms = t.value("q1_ms", 0.0);
  s.q3_ms = t.value("q3_ms", 0.0);
  s.relative_spread = t.value("relative_spread", -1.0);
  s.converged = t.value("converged", false);
  s.cold_cache = t.value("cold_cache", false);
  s.throttled_dropped = integer_or(t, "throttled_dropped", 0);
  s.sm_clock_mhz = t.value("sm_clock_mhz", 0.0);
  return s;
}

// Where the case sits on a roofline: intensity on the x axis, achieved rate against the ceilings.
json roofline_to_json(const CaseResult& c, const std::optional<Ceilings>& ceilings) {
  json j{{"arithmetic_intensity", c.problem.flops() / c.problem.min_bytes()},
         {"achieved_tb_per_s", c.achieved_tb_per_s()}};
  if (ceilings) {
    const double peak = c.problem.dtype == DType::bf16 ? ceilings->bf16_gemm_tflops : ceilings->fp16_gemm_tflops;
    j["percent_of_compute_ceiling"] = 100.0 * c.tflops() / peak;
    j["percent_of_copy_bandwidth"] = 100.0 * c.achieved_tb_per_s() / ceilings->copy_tb_per_s;
  }
  return j;
}

json case_to_json(const CaseResult& c, const std::optional<Ceilings>& ceilings) {
  json j{{"backend", c.backend},
         {"problem", problem_to_json(c.problem)},
         {"status", status_name(c.status)},
         {"predicted_bytes", c.predicted_bytes}};
  if (!c.reason.empty()) j["reason"] = c.reason;
  if (c.verification) {
    const Verification& v = *c.verification;
    j["verification"] = {{"passed", v.passed},
                         {"rel_l2_error", v.rel_l2_error},
                         {"max_abs_error", v.max_abs_error},
                         {"non_finite", v.non_finite},
                         {"rel_l2_tolerance", v.rel_l2_tolerance},
                         {"max_abs_tolerance", v.max_abs_tolerance}};
  }
  if (c.timing) {
    j["timing"] = timing_to_json(*c.timing);
    j["tflops"] = c.tflops();
    j["roofline"] = roofline_to_json(c, ceilings);
  }
  if (c.measured_bytes > 0) j["measured_bytes"] = c.measured_bytes;
  if (!c.setup.empty()) {
    json times = json::object();
    for (const auto& [step, ms] : c.setup.times_ms) times[step] = ms;
    j["setup"] = {{"config", c.setup.config}, {"times_ms", times}};
  }
  if (c.host) j["host"] = host_cost_to_json(*c.host);
  if (c.profile) j["profile"] = profile_to_json(*c.profile);
  return j;
}

CaseStatus status_from_text(const std::string& s) {
  if (s == "ok") return CaseStatus::ok;
  if (s == "skipped") return CaseStatus::skipped;
  if (s == "failed") return CaseStatus::failed;
  throw std::invalid_argument("unknown status \"" + s + "\"");
}

CaseResult case_from_json(const json& j) {
  CaseResult c;
  c.backend = j.at("backend").get<std::string>();
  c.problem = problem_from_json(j.at("problem"));
  c.status = status_from_text(j.at("status").get<std::string>());
  c.reason = j.value("reason", "");
  c.predicted_bytes = integer_or(j, "predicted_bytes", std::size_t{0});
  if (j.contains("verification")) {
    const json& v = j["verification"];
    c.verification = Verification{v.at("rel_l2_error").get<double>(),
                                  v.at("max_abs_error").get<double>(),
                                  integer_at<uint64_t>(v, "non_finite"),
                                  v.at("rel_l2_tolerance").get<double>(),
                                  v.at("max_abs_tolerance").get<double>(),
                                  v.at("passed").get<bool>()};
  }
  if (j.contains("timing")) {
    c.timing = timing_from_json(j["timing"]);
  }
  c.measured_bytes = integer_or(j, "measured_bytes", std::size_t{0});
  if (j.contains("setup")) {
    const json& setup = j["setup"];
    c.setup.config = setup.at("config").get<std::string>();
    for (const auto& [step, ms] : setup.at("times_ms").items()) c.setup.times_ms.emplace_back(step, ms.get<double>());
  } else {
    c.setup.config = j.value("chosen_config", "");  // schema 3
  }
  if (j.contains("host")) c.host = host_cost_from_json(j["host"]);
  if (j.contains("profile")) c.profile = profile_from_json(j["profile"]);
  return c;
}

}  // namespace

json report_to_json(const RunReport& r) {
  const Environment& e = r.environment;
  json env{{"tool_version", e.tool_version}, {"git_sha", e.git_sha},
           {"command_line", e.command_line}, {"hostname", e.hostname},
           {"started_at", e.started_at},     {"seed", e.seed}};
  env["device"] = e.device ? device_to_json(*e.device) : json(nullptr);
  env["profiler"] = {{"enabled", e.profiler.enabled}, {"description", e.profiler.description}};
  env["ceilings"] = e.ceilings ? ceilings_to_json(*e.ceilings) : json(nullptr);
  json cases = json::array();
  for (const CaseResult& c : r.cases) cases.push_back(case_to_json(c, e.ceilings));
  return json{{"schema", "sdpa-prof/result"},
              {"schema_version", kResultSchemaVersion},
              {"flop_count", kFlopCountConvention},
              {"environment", env},
              {"config", config_to_json(r.config)},
              {"cases", cases}};
}

RunReport report_from_json(const json& j) {
  try {
    if (j.value("schema", "") != "sdpa-prof/result") throw std::invalid_argument("not an sdpa-prof result (no \"schema\": \"sdpa-prof/result\")");
    const int version = integer_at<int>(j, "schema_version");
    if (version > kResultSchemaVersion)
      throw std::invalid_argument(fmt::format("schema version {} is newer than this tool reads ({})",
                                              version, kResultSchemaVersion));
    RunReport r;
    const json& env = j.at("environment");
    r.environment.tool_version = env.at("tool_version").get<std::string>();
    r.environment.git_sha = env.at("git_sha").get<std::string>();
    r.environment.command_line = env.at("command_line").get<std::string>();
    r.environment.hostname = env.value("hostname", "");
    r.environment.started_at = env.value("started_at", "");
    r.environment.seed = integer_or(env, "seed", uint64_t{0});
    if (!env.at("device").is_null()) r.environment.device = device_from_json(env["device"]);
    if (env.contains("profiler"))
      r.environment.profiler = Profiler{env["profiler"].at("enabled").get<bool>(),
                                        env["profiler"].at("description").get<std::string>()};
    if (env.contains("ceilings") && !env["ceilings"].is_null()) r.environment.ceilings = ceilings_from_json(env["ceilings"]);
    json config = j.at("config");
    config.erase("samples");  // schema 1 and 2 had a fixed sample count; schema 3 samples to a noise target
    r.config = parse_config(config.dump(), "the result's config");
    for (const json& c : j.at("cases")) r.cases.push_back(case_from_json(c));
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("malformed sdpa-prof result: {}", e.what()));
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format("malformed sdpa-prof result: {}", e.what()));
  }
}

}  // namespace sdpa
