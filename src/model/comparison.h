// A comparison of two runs, case by case: what `compare` found, for its printers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/problem.h"

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

}  // namespace sdpa
