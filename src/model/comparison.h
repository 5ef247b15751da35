// A comparison of two runs, case by case: what `compare` found, for its printers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/problem.h"

namespace sdpa {

// slower_clock: slower, but no more than the lower SM clock explains (a regression only under
// --strict-clock).
enum class Verdict { faster, slower, slower_clock, same, unclear, not_comparable, only_in_base, only_in_new };
const char* verdict_name(Verdict v);

// What made a case a regression: its status, its structure (kernels, copies), its time, or the
// DRAM bytes its kernels move per forward (hardware counters of both runs).
enum class RegressionKind { none, status, structure, time, dram_bytes };
const char* regression_kind_id(RegressionKind k);  // "none", "status", "structure", "time", "dram-bytes"

struct CaseComparison {
  std::string backend;
  Problem problem;
  std::optional<double> base_ms;
  std::optional<double> new_ms;
  double change = 0;  // new / base - 1
  double noise = 0;   // relative noise of both runs together
  // When both runs carry their median SM clock: new clock / base clock - 1, and the change the
  // times would show at equal clocks (an estimate: a compute-bound kernel's time scales with it).
  std::optional<double> clock_change;
  std::optional<double> change_at_equal_clock;
  // When both runs measured DRAM bytes per forward: new / base - 1.
  std::optional<double> dram_bytes_change;
  Verdict verdict = Verdict::not_comparable;
  std::string note;   // why a case regressed or could not be compared
  bool regression = false;
  RegressionKind kind = RegressionKind::none;  // the first reason it is a regression
};

// "slower, clock -12%" for a slowdown the clock explains; else the verdict's name.
std::string verdict_text(const CaseComparison& c);

struct Comparison {
  std::vector<std::string> environment_differences;
  std::vector<CaseComparison> cases;
  double threshold = 0.05;
  bool strict_clock = false;  // a slowdown the clock explains is a regression anyway

  bool any_regression() const;
};

}  // namespace sdpa
