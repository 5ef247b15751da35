// Sweep axes as data: each axis is defined once, here, and that one entry drives the CLI flag,
// the preset key, the preset and result JSON, the CSV column, the expansion into problems and
// the case identity. Adding an axis (a mask kind, a window) is one entry in axis_table().
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/problem.h"

namespace sdpa {

using AxisValue = std::variant<int64_t, double, bool, std::string>;

enum class AxisType {
  positive_integer,  // int64_t > 0
  positive_number,   // finite double > 0
  boolean,           // --X / --no-X on the command line
  choice,            // one of AxisSpec::choices
};

struct AxisSpec {
  std::string name;        // the preset key and, unless json_key says otherwise, the JSON key
  std::string json_key;    // key in a result's "problem" object (empty: name)
  std::string flag;        // "--seq-kv"; a boolean axis also gets "--no-" + the rest
  std::string help;
  AxisType type = AxisType::positive_integer;
  std::vector<std::string> choices;  // AxisType::choice only
  std::vector<AxisValue> defaults;   // used when neither the preset nor the CLI gives values
  // When set and no values are given, each case takes this other axis's value (kv_heads follows
  // heads); when neither this nor defaults is set, the Problem keeps its own default.
  std::string follows;
  bool identity = true;  // part of a case's identity (CaseKey), compared across runs
  // How the axis is written in a trace range name (model/range_name.h), one '_'-separated field:
  // the tag and the value ("B8", "scale0.125"); a choice with no tag as its value alone ("bf16");
  // a boolean as the tag when true ("causal"), nothing when false. A field is left out when the
  // reader can tell its value without it: that of the axis it follows, or the default (at_default).
  std::string range_tag;
  std::function<bool(const Problem&)> at_default;  // null: the axis has no implied value
  // At its default the axis is absent, not implied (a paged K/V cache): the case key, the result's
  // problem JSON and the CSV leave it out, so results from before the axis keep their keys.
  bool absent_at_default = false;
  int nesting = 0;       // expansion order: lower values vary slowest
  std::function<void(Problem&, const AxisValue&)> apply;
  std::function<AxisValue(const Problem&)> read;

  const std::string& result_key() const { return json_key.empty() ? name : json_key; }
};

// Every axis of the sweep, in the order results show them (columns, JSON keys).
const std::vector<AxisSpec>& axis_table();
const AxisSpec* find_axis(const std::vector<AxisSpec>& axes, std::string_view name);
// Whether `p` has a value of `axis` at all (false only for an absent_at_default axis at its default).
bool axis_present(const AxisSpec& axis, const Problem& p);

// "a positive integer", "bf16 or fp16", ...: what a value of this axis must be.
std::string expected_text(const AxisSpec& axis);
// One value from command-line text; throws InputError ("--seq: expected a positive integer,
// got 'abc'"). Integers are decimal only.
AxisValue parse_axis_text(const AxisSpec& axis, std::string_view text);
// One value from JSON; throws InputError naming `where` when the type or range is wrong.
AxisValue axis_value_from_json(const AxisSpec& axis, const nlohmann::json& value, const std::string& where);
nlohmann::json axis_value_to_json(const AxisValue& value);
// Canonical text of a value: "1024", "bf16", "true", "0.125".
std::string axis_value_text(const AxisValue& value);

}  // namespace sdpa
