#include "report/result_sets.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "model/case_key.h"
#include "model/errors.h"
#include "io/preset.h"

namespace sdpa {
namespace {

std::string device_model(const RunReport& r) { return r.environment.device ? r.environment.device->name : "no GPU"; }

// Parts that ran on different GPUs (of one model): the environment lists them all, and each case
// names the one it ran on.
void name_each_cases_device(const std::vector<NamedReport>& parts, RunReport& merged) {
  std::vector<DeviceInfo> devices;
  const auto add = [&](const DeviceInfo& d) {
    if (std::none_of(devices.begin(), devices.end(), [&](const DeviceInfo& e) { return e.uuid == d.uuid; }))
      devices.push_back(d);
  };
  for (const NamedReport& part : parts) {
    for (const DeviceInfo& d : part.report.environment.devices) add(d);
    if (part.report.environment.device) add(*part.report.environment.device);
  }
  if (devices.size() < 2) return;
  merged.environment.devices = devices;
  std::size_t at = 0;
  for (const NamedReport& part : parts)
    for (std::size_t i = 0; i < part.report.cases.size(); ++i, ++at)
      if (merged.cases[at].device_uuid.empty() && part.report.environment.device)
        merged.cases[at].device_uuid = part.report.environment.device->uuid;
}

}  // namespace

std::string shard_text(const std::optional<Shard>& s) { return s ? fmt::format("{}/{}", s->index, s->count) : "none"; }

std::string sweep_difference(const RunReport& a, const RunReport& b) {
  if (device_model(a) != device_model(b))
    return fmt::format("the GPU: {} there, {} here", device_model(a), device_model(b));
  if (a.environment.tool_version != b.environment.tool_version)
    return fmt::format("the tool version: {} there, {} here", a.environment.tool_version, b.environment.tool_version);
  const nlohmann::json config_a = config_to_json(a.config);
  const nlohmann::json config_b = config_to_json(b.config);
  std::set<std::string> keys;
  for (const auto& [key, value] : config_a.items()) keys.insert(key);
  for (const auto& [key, value] : config_b.items()) keys.insert(key);
  for (const std::string& key : keys) {
    const nlohmann::json there = config_a.value(key, nlohmann::json());
    const nlohmann::json here = config_b.value(key, nlohmann::json());
    if (there != here) return fmt::format("the config's \"{}\": {} there, {} here", key, there.dump(), here.dump());
  }
  return "";
}

std::vector<CaseResult> finished_cases(const RunReport& earlier) {
  std::vector<CaseResult> kept;
  for (const CaseResult& c : earlier.cases)
    if (!(c.timing && c.timing->interrupted)) kept.push_back(c);
  return kept;
}

RunReport merge_reports(const std::vector<NamedReport>& parts) {
  if (parts.empty()) throw InputError("merge: no result to merge");
  RunReport merged;
  merged.environment = parts.front().report.environment;
  merged.config = parts.front().report.config;
  std::unordered_map<CaseKey, std::string, CaseKeyHash> first_in;
  std::vector<std::string> partial;
  std::set<int> shards;
  std::optional<int> shard_count;
  for (const NamedReport& part : parts) {
    const RunReport& r = part.report;
    if (r.trace) throw InputError(fmt::format("{}: a trace, not a sweep: only sweeps are merged", part.path));
    if (const std::string why = sweep_difference(parts.front().report, r); !why.empty())
      throw InputError(fmt::format("{} and {} measured different sweeps: {}", parts.front().path, part.path, why));
    if (r.shard) {
      if (shard_count && *shard_count != r.shard->count)
        throw InputError(fmt::format("{}: shard {} of a sweep the other files split {} ways", part.path,
                                     shard_text(r.shard), *shard_count));
      shard_count = r.shard->count;
      shards.insert(r.shard->index);
    }
    for (const CaseResult& c : r.cases) {
      const CaseKey key = case_key(c.backend, c.problem);
      if (const auto [at, added] = first_in.emplace(key, part.path); !added)
        throw InputError(fmt::format("the case {} is in both {} and {}", key.text(), at->second, part.path));
      merged.cases.push_back(c);
    }
    if (r.partial) partial.push_back(fmt::format("{}: {}", part.path, r.partial_reason));
  }
  if (shard_count) {
    std::vector<int> missing;
    for (int k = 1; k <= *shard_count; ++k)
      if (!shards.contains(k)) missing.push_back(k);
    if (!missing.empty())
      partial.push_back(fmt::format("shard{} {} of {} missing", missing.size() > 1 ? "s" : "", fmt::join(missing, ", "),
                                    *shard_count));
  }
  name_each_cases_device(parts, merged);
  merged.partial = !partial.empty();
  merged.partial_reason = fmt::format("{}", fmt::join(partial, "; "));
  return merged;
}

}  // namespace sdpa
