#include <cstdio>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/ceilings_file.h"
#include "io/json_input.h"
#include "io/preset.h"
#include "model/case_key.h"
#include "model/axes.h"
#include "model/errors.h"
#include "model/roofline.h"
#include "report/report.h"
#include "report/report_json_profile.h"
#include "report/report_json_trace.h"

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

// "13.0" -> 13000, as the CUDA APIs count versions.
int version_from_text(const JsonFields& j, std::string_view key) {
  const std::string text = j.text(key);
  int major = 0;
  int minor = 0;
  if (std::sscanf(text.c_str(), "%4d.%3d", &major, &minor) != 2 || major < 0 || minor < 0)
    j.fail(key, "a version MAJOR.MINOR");
  return major * 1000 + minor * 10;
}

DeviceInfo device_from_json(const JsonFields& j) {
  constexpr int64_t kMaxBytes = int64_t{1} << 50;  // far beyond any GPU's memory
  DeviceInfo d;
  d.name = j.text("name");
  d.uuid = j.text_or("uuid", "");
  const std::string cc = j.text("compute_capability");
  if (std::sscanf(cc.c_str(), "%3d.%3d", &d.cc_major, &d.cc_minor) != 2 || d.cc_major < 0 || d.cc_minor < 0)
    j.fail("compute_capability", "MAJOR.MINOR");
  d.sm_count = static_cast<int>(j.integer("sm_count", 1, 100000));
  d.total_memory = static_cast<std::size_t>(j.integer("memory_bytes", 1, kMaxBytes));
  d.l2_bytes = static_cast<std::size_t>(j.integer_or("l2_bytes", 0, 0, kMaxBytes));
  d.shared_per_block_optin = static_cast<std::size_t>(j.integer_or("shared_per_block_optin_bytes", 0, 0, kMaxBytes));
  d.sm_clock_khz = 1000 * static_cast<int>(j.integer_or("sm_clock_peak_mhz", 0, 0, 100000));
  d.ecc_enabled = j.boolean_or("ecc_enabled", false);
  d.driver_version = version_from_text(j, "driver_version");
  d.runtime_version = version_from_text(j, "cuda_runtime_version");
  d.cublas_version = static_cast<int>(j.integer_or("cublas_version", 0, 0, INT32_MAX));
  d.cudnn_version = j.raw("cudnn_version").is_null() ? 0 : static_cast<std::size_t>(j.integer("cudnn_version", 0));
  return d;
}

json problem_to_json(const Problem& p) {
  json j;
  for (const AxisSpec& a : axis_table())
    if (axis_present(a, p)) j[a.result_key()] = axis_value_to_json(a.read(p));
  j["flops"] = p.flops();
  j["min_bytes"] = p.min_bytes();
  return j;
}

Problem problem_from_json(const JsonFields& j) {
  Problem p;
  for (const AxisSpec& a : axis_table()) {
    if (!j.has(a.result_key())) {
      if (a.defaults.empty()) continue;
      j.fail(a.result_key(), expected_text(a));
    }
    a.apply(p, axis_value_from_json(a, j.raw(a.result_key()), j.where() + ": "));
  }
  if (const std::string why = problem_error(p); !why.empty()) throw InputError(fmt::format("{}: {}", j.where(), why));
  return p;
}

json optional_to_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::optional<double> optional_from_json(const JsonFields& j, std::string_view key) {
  if (!j.has(key) || j.raw(key).is_null()) return std::nullopt;
  return j.number(key, 0, 1e7);
}

json power_to_json(const PowerSummary& p) {
  json j{{"mean_w", optional_to_json(p.mean_w)},
         {"highest_w", optional_to_json(p.highest_w)},
         {"limit_w", optional_to_json(p.limit_w)},
         {"temperature_c", optional_to_json(p.temperature_c)},
         {"sm_clock_mhz", optional_to_json(p.sm_clock_mhz)},
         {"readings", p.readings}};
  j["clock_event_reasons"] = p.reasons ? json(clock_reason_ids(*p.reasons)) : json(nullptr);
  j["clock_event_mask"] = p.reasons ? json(*p.reasons) : json(nullptr);
  return j;
}

PowerSummary power_from_json(const JsonFields& j) {
  PowerSummary p;
  p.mean_w = optional_from_json(j, "mean_w");
  p.highest_w = optional_from_json(j, "highest_w");
  p.limit_w = optional_from_json(j, "limit_w");
  p.temperature_c = optional_from_json(j, "temperature_c");
  p.sm_clock_mhz = optional_from_json(j, "sm_clock_mhz");
  p.readings = static_cast<int>(j.integer_or("readings", 0, 0, INT32_MAX));
  if (j.has("clock_event_mask") && !j.raw("clock_event_mask").is_null()) p.reasons = j.unsigned_integer("clock_event_mask");
  return p;
}

json timing_to_json(const TimingStats& t) {
  json j{{"warmup", t.warmup},
              {"samples", t.samples},
              {"median_ms", t.median_ms},
              {"mean_ms", t.mean_ms},
              {"min_ms", t.min_ms},
              {"max_ms", t.max_ms},
              {"q1_ms", t.q1_ms},
              {"q3_ms", t.q3_ms},
              {"relative_spread", t.relative_spread},
              {"converged", t.converged},
              {"interrupted", t.interrupted},
              {"cold_cache", t.cold_cache},
              {"throttled_dropped", t.throttled_dropped},
              {"all_throttled", t.all_throttled},
              {"sm_clock_mhz", t.sm_clock_mhz},
              {"sm_clock_peak_mhz", t.sm_clock_peak_mhz}};
  // An estimate (the median at the peak SM clock, for a compute-bound kernel); not read back.
  if (const double ms = clock_normalized_ms(t); ms > 0) j["clock_normalized_ms"] = ms;
  if (t.power) j["power"] = power_to_json(*t.power);
  return j;
}

TimingStats timing_from_json(const JsonFields& t) {
  constexpr double kMaxMs = 1e9;
  TimingStats s;
  s.warmup = static_cast<int>(t.integer("warmup", 0, 1000000));
  s.samples = static_cast<int>(t.integer("samples", 1, 100000000));
  s.median_ms = t.number("median_ms", 1e-9, kMaxMs);
  s.min_ms = t.number("min_ms", 1e-9, kMaxMs);
  s.max_ms = t.number("max_ms", 1e-9, kMaxMs);
  if (!(s.min_ms <= s.median_ms && s.median_ms <= s.max_ms))
    throw InputError(fmt::format("{}: need min_ms <= median_ms <= max_ms, got {} / {} / {}", t.where(), s.min_ms,
                                 s.median_ms, s.max_ms));
  // Schema 3 added the rest; older results leave them at their "unknown" defaults.
  s.mean_ms = t.number_or("mean_ms", 0.0, 0, kMaxMs);
  s.q1_ms = t.number_or("q1_ms", 0.0, 0, kMaxMs);
  s.q3_ms = t.number_or("q3_ms", 0.0, 0, kMaxMs);
  s.relative_spread = t.number_or("relative_spread", -1.0, -1, 1e6);
  s.converged = t.boolean_or("converged", false);
  s.interrupted = t.boolean_or("interrupted", false);
  s.cold_cache = t.boolean_or("cold_cache", false);
  s.throttled_dropped = static_cast<int>(t.integer_or("throttled_dropped", 0, 0, INT32_MAX));
  s.all_throttled = t.boolean_or("all_throttled", false);
  s.sm_clock_mhz = t.number_or("sm_clock_mhz", 0.0, 0, 100000);
  s.sm_clock_peak_mhz = t.number_or("sm_clock_peak_mhz", 0.0, 0, 100000);  // older files: the device's, filled in below
  if (t.has("power")) s.power = power_from_json(t.object("power"));
  return s;
}

// Where the case sits on a roofline: intensity on the x axis, achieved rate against the ceilings.
json roofline_to_json(const CaseResult& c, const std::optional<Ceilings>& ceilings) {
  json j{{"arithmetic_intensity", c.problem.flops() / c.problem.min_bytes()},
         {"achieved_tb_per_s", c.achieved_tb_per_s()}};
  // Measured by the counter pass: the bytes the kernels really moved, so the point's real intensity.
  if (const std::optional<double> bytes = c.profile ? dram_bytes_per_forward(*c.profile) : std::nullopt;
      bytes && *bytes > 0) {
    j["measured_dram_bytes"] = *bytes;
    j["measured_arithmetic_intensity"] = c.problem.flops() / *bytes;
    j["measured_dram_tb_per_s"] = *bytes / (c.timing->median_ms * 1e-3) / 1e12;
  }
  if (ceilings) {
    j["percent_of_compute_ceiling"] = 100.0 * c.tflops() / compute_ceiling_tflops(*ceilings, c.problem.dtype);
    j["percent_of_copy_bandwidth"] = 100.0 * c.achieved_tb_per_s() / ceilings->copy_tb_per_s;
    // Schema 6: the read ceiling, the ridge point and which of the two ceilings the case is held against.
    if (ceilings->read_tb_per_s > 0) {
      j["percent_of_read_bandwidth"] = 100.0 * c.achieved_tb_per_s() / ceilings->read_tb_per_s;
      if (const std::optional<PeakShare> share = peak_share(c, *ceilings)) {
        j["ridge_point"] = share->ridge;
        j["ceiling"] = ceiling_id(share->ceiling);
      }
    }
  }
  return j;
}

// `sm_count`: the device's, 0 when unknown (a dry run's).
json case_to_json(const CaseResult& c, const std::optional<Ceilings>& ceilings, int sm_count) {
  json j{{"backend", c.backend},
         {"source", c.source},
         {"problem", problem_to_json(c.problem)},
         {"status", status_name(c.status)},
         {"predicted_bytes", c.predicted_bytes}};
  if (!c.reason.empty()) j["reason"] = c.reason;
  if (!c.device_uuid.empty()) j["device_uuid"] = c.device_uuid;
  if (c.verification) {
    const Verification& v = *c.verification;
    j["verification"] = {{"passed", v.passed},
                         {"rel_l2_error", v.rel_l2_error},
                         {"max_abs_error", v.max_abs_error},
                         {"non_finite", v.non_finite},
                         {"rel_l2_tolerance", v.rel_l2_tolerance},
                         {"max_abs_tolerance", v.max_abs_tolerance},
                         {"tensor", v.tensor}};
  }
  if (c.timing) {
    j["timing"] = timing_to_json(*c.timing);
    j["tflops"] = c.tflops();
    j["roofline"] = roofline_to_json(c, ceilings);
    // What the timing pass shows (the SM clock) and where it sits against the read ceiling: derived,
    // not read back.
    json findings = json::array();
    std::vector<Finding> derived = clock_findings(*c.timing);
    if (ceilings)
      for (Finding& f : bandwidth_findings(c, *ceilings, sm_count)) derived.push_back(std::move(f));
    for (const Finding& f : derived) findings.push_back({{"rule", f.rule}, {"text", f.text}});
    j["findings"] = findings;
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

CaseStatus status_from_json(const JsonFields& j) {
  const std::string s = j.text("status");
  if (s == "ok") return CaseStatus::ok;
  if (s == "skipped") return CaseStatus::skipped;
  if (s == "failed") return CaseStatus::failed;
  j.fail("status", "ok, skipped or failed");
}

CaseResult case_from_json(const JsonFields& j) {
  constexpr int64_t kMaxBytes = int64_t{1} << 62;
  CaseResult c;
  c.backend = j.text("backend");
  c.source = j.text_or("source", kSourceSdpaProf);  // before trace: only our own backends
  c.problem = problem_from_json(j.object("problem"));
  c.status = status_from_json(j);
  c.reason = j.text_or("reason", "");
  c.device_uuid = j.text_or("device_uuid", "");
  c.predicted_bytes = static_cast<std::size_t>(j.integer_or("predicted_bytes", 0, 0, kMaxBytes));
  if (j.has("verification")) {
    const JsonFields v = j.object("verification");
    c.verification = Verification{v.number("rel_l2_error", 0), v.number("max_abs_error", 0),
                                  v.unsigned_integer("non_finite"), v.number("rel_l2_tolerance", 0),
                                  v.number("max_abs_tolerance", 0), v.boolean("passed"),
                                  v.text_or("tensor", "O")};
    if (const std::string& t = c.verification->tensor; t != "O" && t != "dQ" && t != "dK" && t != "dV")
      v.fail("tensor", "O, dQ, dK or dV");
  }
  if (j.has("timing")) c.timing = timing_from_json(j.object("timing"));
  if (c.timing && c.status != CaseStatus::ok)
    throw InputError(fmt::format("{}: a {} case carries a timing", j.where(), status_name(c.status)));
  c.measured_bytes = static_cast<std::size_t>(j.integer_or("measured_bytes", 0, 0, kMaxBytes));
  if (j.has("setup")) {
    const JsonFields setup = j.object("setup");
    c.setup.config = setup.text("config");
    const JsonFields times = setup.object("times_ms");
    for (const auto& item : times.value().items()) c.setup.times_ms.emplace_back(item.key(), times.number(item.key(), 0));
  } else {
    c.setup.config = j.text_or("chosen_config", "");  // schema 3
  }
  if (j.has("host")) c.host = host_cost_from_json(j.object("host"));
  if (j.has("profile")) c.profile = profile_from_json(j.object("profile"));
  return c;
}

}  // namespace

json report_to_json(const RunReport& r) {
  const Environment& e = r.environment;
  json env{{"tool_version", e.tool_version}, {"git_sha", e.git_sha},
           {"command_line", e.command_line}, {"hostname", e.hostname},
           {"started_at", e.started_at},     {"seed", e.seed}};
  env["device"] = e.device ? device_to_json(*e.device) : json(nullptr);
  if (!e.devices.empty()) {
    env["devices"] = json::array();
    for (const DeviceInfo& d : e.devices) env["devices"].push_back(device_to_json(d));
  }
  env["profiler"] = {{"enabled", e.profiler.enabled}, {"description", e.profiler.description}};
  env["ceilings"] = e.ceilings ? ceilings_to_json(*e.ceilings) : json(nullptr);
  env["power"] = {{"enabled", e.power.enabled}, {"description", e.power.description}};
  env["counters"] = {{"enabled", e.counters.enabled}, {"description", e.counters.description}};
  json cases = json::array();
  for (const CaseResult& c : r.cases) cases.push_back(case_to_json(c, e.ceilings, e.device ? e.device->sm_count : 0));
  json doc{{"schema", "sdpa-prof/result"},
              {"schema_version", kResultSchemaVersion},
              {"flop_count", kFlopCountConvention},
              {"environment", env},
              {"config", config_to_json(r.config)},
              {"partial", r.partial},
              {"partial_reason", r.partial_reason},
              {"cases", cases}};
  if (r.trace) doc["trace"] = trace_to_json(*r.trace);
  if (r.shard) doc["shard"] = {{"index", r.shard->index}, {"count", r.shard->count}};
  return doc;
}

RunReport report_from_json(const json& doc) {
  if (!doc.is_object() || !doc.contains("schema") || doc["schema"] != "sdpa-prof/result")
    throw InputError("not an sdpa-prof result (no \"schema\": \"sdpa-prof/result\")");
  const JsonFields j(doc, "");
  const int64_t version = j.integer("schema_version", 1);
  if (version > kResultSchemaVersion)
    throw InputError(fmt::format("schema version {} is newer than this tool reads ({})", version, kResultSchemaVersion));
  RunReport r;
  const JsonFields env = j.object("environment");
  r.environment.tool_version = env.text("tool_version");
  r.environment.git_sha = env.text("git_sha");
  r.environment.command_line = env.text("command_line");
  r.environment.hostname = env.text_or("hostname", "");
  r.environment.started_at = env.text_or("started_at", "");
  r.environment.seed = env.has("seed") ? env.unsigned_integer("seed") : 0;
  if (!env.raw("device").is_null()) r.environment.device = device_from_json(env.object("device"));
  if (env.has("devices")) {
    const json& devices = env.array("devices");
    for (std::size_t i = 0; i < devices.size(); ++i)
      r.environment.devices.push_back(device_from_json(JsonFields(devices[i], element_path("environment.devices", i))));
  }
  if (env.has("profiler")) {
    const JsonFields profiler = env.object("profiler");
    r.environment.profiler = Profiler{profiler.boolean("enabled"), profiler.text("description")};
  }
  if (env.has("ceilings") && !env.raw("ceilings").is_null()) r.environment.ceilings = ceilings_from_json(env.object("ceilings"));
  if (env.has("power")) {
    const JsonFields power = env.object("power");
    r.environment.power = PowerSource{power.boolean("enabled"), power.text("description")};
  }
  if (env.has("counters")) {  // schema 5
    const JsonFields counters = env.object("counters");
    r.environment.counters = Profiler{counters.boolean("enabled"), counters.text("description")};
  }
  json config = j.object("config").value();
  config.erase("samples");  // schema 1 and 2 had a fixed sample count; schema 3 samples to a noise target
  r.config = parse_config(config.dump(), "the result's config", axis_table(), UnknownKeys::skipped);
  r.partial = j.boolean_or("partial", false);
  r.partial_reason = j.text_or("partial_reason", "");
  if (j.has("trace")) r.trace = trace_from_json(j.object("trace"));
  if (j.has("shard")) {
    const JsonFields shard = j.object("shard");
    const auto count = static_cast<int>(shard.integer("count", 1, kMaxShards));
    r.shard = Shard{static_cast<int>(shard.integer("index", 1, count)), count};
  }
  const json& cases = j.array("cases");
  std::unordered_set<CaseKey, CaseKeyHash> seen;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string where = element_path("cases", i);
    CaseResult c = case_from_json(JsonFields(cases[i], where));
    if (!seen.insert(case_key(c.backend, c.problem)).second)
      throw InputError(fmt::format("{}: the case {} appears twice", where, case_key(c.backend, c.problem).text()));
    r.cases.push_back(std::move(c));
  }
  // Results before the peak clock was recorded per case: the device's peak is the same figure.
  const double device_peak_mhz = r.environment.device ? r.environment.device->sm_clock_khz / 1000.0 : 0.0;
  for (CaseResult& c : r.cases)
    if (c.timing && c.timing->sm_clock_peak_mhz == 0) c.timing->sm_clock_peak_mhz = device_peak_mhz;
  return r;
}

RunReport read_report_file(const std::string& path) {
  const json j = read_untrusted_json_file(path);
  try {
    return report_from_json(j);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace sdpa
