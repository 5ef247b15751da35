#include "model/range_name.h"

#include <fmt/format.h>

#include <vector>

#include "model/axes.h"
#include "model/number_text.h"

namespace sdpa {
namespace {

constexpr const char* kTool = "sdpa-prof/";
constexpr std::size_t kMaxBackend = 64;
constexpr int kMaxForward = 1000000;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

// "1024" after the letters `tag`, in the range of a size ("S01024" and "S0" are not sizes).
std::optional<int64_t> size_field(const std::string& field, const std::string& tag) {
  if (field.size() <= tag.size() || field.compare(0, tag.size(), tag) != 0) return std::nullopt;
  const std::string digits = field.substr(tag.size());
  if (digits[0] == '0') return std::nullopt;
  const std::optional<uint64_t> v = decimal_unsigned(digits);
  if (!v || *v == 0 || *v > (uint64_t{1} << 40)) return std::nullopt;
  return static_cast<int64_t>(*v);
}

// A number after `tag`, spelled as axis_value_text spells it (one spelling per value).
std::optional<double> number_field(const std::string& field, const std::string& tag) {
  if (field.size() <= tag.size() || field.compare(0, tag.size(), tag) != 0) return std::nullopt;
  const std::string text = field.substr(tag.size());
  const std::optional<double> v = finite_number(text);
  if (!v || *v <= 0 || axis_value_text(AxisValue{*v}) != text) return std::nullopt;
  return v;
}

bool valid_backend(const std::string& backend) {
  if (backend.empty() || backend.size() > kMaxBackend) return false;
  for (const char c : backend)
    if (c == '/' || c <= ' ' || c > '~') return false;
  return true;
}

// The value a reader assumes for an axis whose field is left out: the followed axis's, or none
// when the axis is at its default (the Problem keeps its own).
bool implied(const AxisSpec& axis, const Problem& p) {
  if (axis.at_default) return axis.at_default(p);
  if (axis.follows.empty()) return false;
  const AxisSpec* followed = find_axis(axis_table(), axis.follows);
  return followed != nullptr && axis.read(p) == followed->read(p);
}

// One axis's field in a range name ("B8", "bf16", "causal"), or "" when it is left out.
std::string range_field(const AxisSpec& axis, const Problem& p) {
  if (axis.type == AxisType::boolean) return std::get<bool>(axis.read(p)) ? axis.range_tag : "";
  if (implied(axis, p)) return "";
  return axis.range_tag + axis_value_text(axis.read(p));
}

// Reads `axis` from field f[i] into `p`, advancing i; false when the field is missing or wrong
// where it may not be left out.
bool read_field(const AxisSpec& axis, const std::vector<std::string>& f, std::size_t& i, Problem& p) {
  const std::string none;
  const std::string& field = i < f.size() ? f[i] : none;
  std::optional<AxisValue> value;
  switch (axis.type) {
    case AxisType::boolean:
      value = AxisValue{field == axis.range_tag};
      if (field == axis.range_tag) ++i;
      axis.apply(p, *value);
      return true;
    case AxisType::choice:
      for (const std::string& c : axis.choices)
        if (field == axis.range_tag + c) value = AxisValue{c};
      break;
    case AxisType::positive_integer:
      if (const auto v = size_field(field, axis.range_tag)) value = AxisValue{*v};
      break;
    case AxisType::positive_number:
      if (const auto v = number_field(field, axis.range_tag)) value = AxisValue{*v};
      break;
  }
  if (value) {
    axis.apply(p, *value);
    ++i;
    return true;
  }
  // Left out: only an axis with an implied value may be; it follows its axis, or keeps the default.
  if (!axis.follows.empty()) {
    axis.apply(p, find_axis(axis_table(), axis.follows)->read(p));
    return true;
  }
  return static_cast<bool>(axis.at_default);
}

// "B8_H16_S1024_D64_bf16_causal": the identity axes' fields in the table's order, as
// range_prefix() writes them, and nothing else.
std::optional<Problem> parse_problem(const std::string& text) {
  const std::vector<std::string> f = split(text, '_');
  std::size_t i = 0;
  Problem p;
  for (const AxisSpec& axis : axis_table()) {
    if (!axis.identity) continue;
    const std::size_t before = i;
    if (!read_field(axis, f, i, p)) return std::nullopt;
    // A field that spells out what would be implied is another name: the writer leaves it out.
    if (i != before && axis.type != AxisType::boolean && implied(axis, p)) return std::nullopt;
  }
  if (i != f.size() || !problem_error(p).empty()) return std::nullopt;
  return p;
}

}  // namespace

std::string range_problem(const Problem& p) {
  std::string out;
  for (const AxisSpec& axis : axis_table()) {
    if (!axis.identity) continue;
    const std::string field = range_field(axis, p);
    if (!field.empty()) out += (out.empty() ? "" : "_") + field;
  }
  return out;
}

std::string range_prefix(const std::string& backend, const Problem& p) {
  return fmt::format("{}{}/{}", kTool, backend, range_problem(p));
}

std::string forward_range_name(const std::string& backend, const Problem& problem, int forward) {
  return fmt::format("{}/fwd{}", range_prefix(backend, problem), forward);
}

std::optional<ForwardRange> parse_range_prefix(const std::string& prefix) {
  if (prefix.compare(0, std::char_traits<char>::length(kTool), kTool) != 0) return std::nullopt;
  const std::vector<std::string> parts = split(prefix, '/');
  if (parts.size() != 3 || !valid_backend(parts[1])) return std::nullopt;
  const std::optional<Problem> problem = parse_problem(parts[2]);
  if (!problem) return std::nullopt;
  return ForwardRange{parts[1], *problem, 0, prefix};
}

std::optional<ForwardRange> parse_forward_range(const std::string& name) {
  const std::size_t slash = name.rfind('/');
  if (slash == std::string::npos || name.compare(slash, 4, "/fwd") != 0) return std::nullopt;
  const std::string index = name.substr(slash + 4);
  if (index.empty() || (index.size() > 1 && index[0] == '0')) return std::nullopt;
  const std::optional<uint64_t> forward = decimal_unsigned(index);
  if (!forward || *forward >= kMaxForward) return std::nullopt;
  std::optional<ForwardRange> range = parse_range_prefix(name.substr(0, slash));
  if (range) range->forward = static_cast<int>(*forward);
  return range;
}

}  // namespace sdpa
