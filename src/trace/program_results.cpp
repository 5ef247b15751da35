#include "trace/program_results.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "io/json_input.h"
#include "measure/sample_stats.h"
#include "measure/timing.h"
#include "model/errors.h"

namespace sdpa {
namespace {

constexpr const char* kSchema = "sdpa-prof/program-results";
constexpr int kVersion = 2;  // 2: host_us, host_first_call_us
constexpr double kMaxMs = 3.6e6;
constexpr std::size_t kMaxSamples = 1000000;
constexpr std::size_t kMaxFileBytes = std::size_t{64} << 20;

TimingStats timing_from(const JsonFields& c) {
  const nlohmann::json& samples = c.array("samples_ms");
  if (samples.empty() || samples.size() > kMaxSamples)
    c.fail("samples_ms", fmt::format("1 to {} samples", kMaxSamples));
  std::vector<double> ms;
  for (const nlohmann::json& s : samples) {
    if (!s.is_number() || !(s.get<double>() > 0) || s.get<double>() > kMaxMs)
      c.fail("samples_ms", fmt::format("times in ms above 0 and at most {}", kMaxMs));
    ms.push_back(s.get<double>());
  }
  TimingOptions as_taken;
  as_taken.warmup = static_cast<int>(c.integer_or("warmup", 0, 0, 1000000));
  as_taken.hot = !c.boolean_or("cold_cache", false);
  TimingStats t = timing_from_samples(std::move(ms), as_taken);
  t.converged = t.relative_spread <= StoppingRule{}.max_noise;
  return t;
}

// Host µs per call from the samples, or none when the program gave none (version 1).
std::optional<HostCost> host_from(const JsonFields& c) {
  if (!c.has("host_us")) return std::nullopt;
  const nlohmann::json& samples = c.array("host_us");
  if (samples.empty() || samples.size() > kMaxSamples) c.fail("host_us", fmt::format("1 to {} samples", kMaxSamples));
  std::vector<double> us;
  for (const nlohmann::json& s : samples) {
    if (!s.is_number() || !(s.get<double>() > 0) || s.get<double>() > kMaxMs * 1e3)
      c.fail("host_us", fmt::format("times in us above 0 and at most {}", kMaxMs * 1e3));
    us.push_back(s.get<double>());
  }
  HostCost h;
  h.per_call_us = summarize(std::move(us)).median;
  h.first_call_us = c.number_or("host_first_call_us", 0, 0, kMaxMs * 1e3);
  h.calls = static_cast<int>(samples.size());
  return h;
}

}  // namespace

ProgramResults read_program_results(const std::string& path) {
  const nlohmann::json doc = read_untrusted_json_file(path, kMaxFileBytes);
  try {
    const JsonFields j(doc, "");
    if (j.text_or("schema", "") != kSchema)
      throw InputError(fmt::format("not a program result (schema is not \"{}\")", kSchema));
    if (const int64_t v = j.integer("schema_version", 1); v > kVersion)
      throw InputError(
          fmt::format("schema version {} is newer than this tool reads ({})", v, kVersion));
    ProgramResults r;
    r.source = j.text("source");
    const nlohmann::json& cases = j.array("cases");
    std::set<std::string> ranges;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const JsonFields c(cases[i], element_path("cases", i));
      ProgramCase pc;
      const std::optional<ForwardRange> range = parse_range_prefix(c.text("range"));
      if (!range)
        c.fail("range", "a case range name without /fwd<i> (sdpa-prof/<backend>/<problem>)");
      pc.range = *range;
      if (!ranges.insert(range->prefix).second)
        throw InputError(fmt::format("{}: the case {} appears twice", element_path("cases", i), range->prefix));
      const std::string status = c.text("status");
      if (status == "ok") {
        pc.timing = timing_from(c);
        pc.host = host_from(c);
      } else if (status == "skipped" || status == "failed") {
        pc.status = status == "skipped" ? CaseStatus::skipped : CaseStatus::failed;
        pc.reason = c.text("reason");
      } else {
        c.fail("status", "ok, skipped or failed");
      }
      r.cases.push_back(std::move(pc));
    }
    return r;
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", path, e.what()));
  }
}

void merge_program_results(const ProgramResults& results, std::vector<CaseResult>& cases) {
  for (const ProgramCase& p : results.cases) {
    const auto traced = std::find_if(cases.begin(), cases.end(), [&](const CaseResult& c) {
      return range_prefix(c.backend, c.problem) == p.range.prefix;
    });
    if (traced == cases.end()) {
      CaseResult c;
      c.backend = p.range.backend;
      c.problem = p.range.problem;
      c.status = p.status;  // a timed case whose forwards left no records has no profile
      c.reason = p.reason;
      if (p.status != CaseStatus::skipped) {  // report refuses a skipped case with times
        c.timing = p.timing;
        c.host = p.host;
      }
      c.source = results.source;
      cases.push_back(std::move(c));
      continue;
    }
    traced->source = results.source;
    if (p.status == CaseStatus::skipped) {
      traced->status = CaseStatus::skipped;
      traced->reason = p.reason;
      traced->profile.reset();
      traced->timing.reset();
    } else {
      traced->timing = p.timing;
      traced->host = p.host;
    }
  }
}

}  // namespace sdpa
