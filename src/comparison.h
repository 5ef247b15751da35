// Baseline against new results: per case a verdict that accounts for both runs' noise.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "result.h"

namespace sdpa {

enum class Verdict { faster, slower, same, unclear, not_comparable, only_in_base, only_in_new };
const char* verdict_name(Verdict v);

struct CaseComparison {
  std::string backend;
  Problem problem;
  std::optional<double> base_ms;
  std::optional<double> new_ms;
  double change = 0;  // new / base - 1
  double noise = 0;   // relative noise of both runs together
  Verdict verdict = Verdict::not_comparable;
  std::string note;   // why a case regressed or could not be compared
  bool regression = false;
};

struct Comparison {
  std::vector<std::string> environment_differences;
  std::vector<CaseComparison> cases;
  double threshold = 0.05;

  bool any_regression() const;
};

// The identity of a case across runs: backend and every problem axis.
std::string case_key(const std::string& backend, const Problem& p);

// Relative noise of one timing: its median's relative spread, or for results older than
// schema 3, half its min..max range over the median.
double relative_noise(const TimingStats& t);

Comparison compare_reports(const RunReport& base, const RunReport& next, double threshold);

std::string format_comparison_table(const Comparison& c);
std::string format_comparison_markdown(const Comparison& c);
nlohmann::json comparison_to_json(const Comparison& c);

}  // namespace sdpa
