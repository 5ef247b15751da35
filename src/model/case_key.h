// The one identity of a case across runs and inside one: the backend (with its variant) and the
// value of every identity axis. Used by the table's "vs best", compare, and the cuDNN plan cache.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/axes.h"
#include "model/problem.h"

namespace sdpa {

struct CaseKey {
  std::string backend;  // "flash", "cudnn[eng2.k32]"; empty for the problem alone
  std::string problem;  // "batch=8 heads=16 ... causal=true scale=0.125"

  bool operator==(const CaseKey&) const = default;
  std::string text() const { return backend.empty() ? problem : backend + " " + problem; }
};

struct CaseKeyHash {
  std::size_t operator()(const CaseKey& k) const;
};

CaseKey case_key(const std::string& backend, const Problem& p, const std::vector<AxisSpec>& axes = axis_table());
// The problem alone: cases of different backends on one problem share it.
inline CaseKey problem_key(const Problem& p) { return case_key("", p); }

}  // namespace sdpa
