#include "model/range_name.h"

#include <fmt/format.h>

#include <vector>

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

bool valid_backend(const std::string& backend) {
  if (backend.empty() || backend.size() > kMaxBackend) return false;
  for (const char c : backend)
    if (c == '/' || c <= ' ' || c > '~') return false;
  return true;
}

// "B8_H16_S1024_D64_bf16_causal": the fields in their one order, optional ones where they may be.
std::optional<Problem> parse_problem(const std::string& text) {
  const std::vector<std::string> f = split(text, '_');
  std::size_t i = 0;
  const auto next = [&](const std::string& tag, bool optional) -> std::optional<int64_t> {
    if (i >= f.size()) return std::nullopt;
    const std::optional<int64_t> v = size_field(f[i], tag);
    if (v || !optional) ++i;
    return v;
  };
  Problem p;
  const auto b = next("B", false), h = next("H", false);
  if (!b || !h) return std::nullopt;
  const auto hkv = next("Hkv", true);
  const auto s = next("S", false);
  if (!s) return std::nullopt;
  const auto skv = next("Skv", true);
  const auto d = next("D", false);
  if (!d || i >= f.size() || !parse_dtype(f[i++], p.dtype)) return std::nullopt;
  p.causal = i < f.size() && f[i] == "causal";
  if (p.causal) ++i;
  if (i != f.size()) return std::nullopt;
  p.batch = *b;
  p.heads = *h;
  p.kv_heads = hkv.value_or(*h);
  p.seq_q = *s;
  p.seq_kv = skv.value_or(*s);
  p.head_dim = *d;
  // The writer leaves out what equals its default: a name that spells it out is another name.
  if ((hkv && *hkv == *h) || (skv && *skv == *s) || !problem_error(p).empty()) return std::nullopt;
  return p;
}

}  // namespace

std::string range_prefix(const std::string& backend, const Problem& p) {
  std::string shape = p.shape_label();
  for (char& c : shape)
    if (c == ' ') c = '_';
  return fmt::format("{}{}/{}_{}{}", kTool, backend, shape, dtype_name(p.dtype),
                     p.causal ? "_causal" : "");
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
