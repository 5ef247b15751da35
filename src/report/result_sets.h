// Results of one sweep that come in parts: a run continued with --resume, and shards joined by
// `merge`. Parts belong together only when they measured the same sweep with the same tool on
// the same GPU model.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/result.h"

namespace sdpa {

// The first thing in which `a` and `b` measured different sweeps, as
// "the config's \"seq\": [1024] there, [1024,2048] here"; empty when they are parts of one sweep:
// the same config, GPU model and tool version.
std::string sweep_difference(const RunReport& a, const RunReport& b);

// "2/4", or "none".
std::string shard_text(const std::optional<Shard>& shard);

// The cases of `earlier` that a resumed run keeps: all but those whose timing a signal cut short.
std::vector<CaseResult> finished_cases(const RunReport& earlier);

struct NamedReport {
  std::string path;
  RunReport report;
};

// One result from parts of one sweep: their cases in the parts' order. Throws InputError, naming
// the file, for parts of different sweeps (sweep_difference) and for a case in two parts. The
// result is partial when a part is, or when the parts are shards and some shard is missing.
RunReport merge_reports(const std::vector<NamedReport>& parts);

}  // namespace sdpa
