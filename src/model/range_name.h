// The names of the NVTX ranges that make a forward a case, written by our own profile pass and
// by share/sdpa-prof/torch_sdpa.py, and read back by `trace`:
//   sdpa-prof/<backend>/B<b>_H<h>[_Hkv<hkv>]_S<s>[_Skv<skv>]_D<d>_<dtype>[_causal][_scale<x>]/fwd<i>
// The problem part is made from the identity axes of axis_table(), each axis's range_tag and
// value in the table's order (model/axes.h): a new identity axis is a new field. A range named any
// other way is an ordinary range.
#pragma once

#include <optional>
#include <string>

#include "model/problem.h"

namespace sdpa {

struct ForwardRange {
  std::string backend;  // no '/', no space
  Problem problem;
  int forward = 0;
  std::string prefix;  // the name without "/fwd<i>": the case's name, the same for each forward
};

// "B8_H16_S1024_D64_bf16_causal": the problem part of a range name.
std::string range_problem(const Problem& problem);
// "sdpa-prof/naive/B8_H16_S1024_D64_bf16_causal"; forward i's range adds "/fwd<i>".
std::string range_prefix(const std::string& backend, const Problem& problem);
std::string forward_range_name(const std::string& backend, const Problem& problem, int forward);

// The case a range name stands for, or none when it does not follow the grammar exactly
// (sizes out of range, a field missing or repeated, anything after "/fwd<i>").
std::optional<ForwardRange> parse_forward_range(const std::string& name);
// A prefix alone ("sdpa-prof/<backend>/<problem>"): forward is 0.
std::optional<ForwardRange> parse_range_prefix(const std::string& prefix);

}  // namespace sdpa
