// The story of a run, built from its results: per problem, the fastest backend and by how much,
// and for each slower backend the one-line reason, taken from its profile and findings.
#pragma once

#include <string>
#include <vector>

#include "model/result.h"

namespace sdpa {

enum class SummaryKind { fastest, slower, failed, skipped };

struct SummaryLine {
  std::string backend;
  SummaryKind kind = SummaryKind::slower;
  std::string text;  // the whole sentence, starting with the backend's name
};

struct ProblemSummary {
  std::string problem;  // "B8 H16 S4096 D64 bf16 causal"
  std::vector<SummaryLine>
      lines;  // fastest first, then slower ones by time, then those that did not run
};

// A slower backend is compared with the fastest faster one of its own kind (one kernel per
// forward, or several), so that its reason explains the gap: math against naive-inplace, flash
// against cudnn; the fastest of a kind against the fastest overall.
std::vector<ProblemSummary> summarize(const RunReport& report);

}  // namespace sdpa
