#include "model/axes.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/errors.h"
#include "model/number_text.h"

namespace sdpa {
namespace {

using nlohmann::json;

AxisSpec integer_axis(std::string name, std::string json_key, std::string range_tag, std::string help,
                      int nesting, int64_t Problem::*field) {
  AxisSpec a;
  a.name = name;
  a.range_tag = std::move(range_tag);
  a.json_key = std::move(json_key);
  a.flag = "--" + name;
  for (char& c : a.flag)
    if (c == '_') c = '-';
  a.help = std::move(help);
  a.type = AxisType::positive_integer;
  a.nesting = nesting;
  a.apply = [field](Problem& p, const AxisValue& v) { p.*field = std::get<int64_t>(v); };
  a.read = [field](const Problem& p) { return AxisValue{p.*field}; };
  return a;
}

// K and V in a shuffled pool of pages of N tokens read through a block table (kernels/paged_kv.h);
// absent: contiguous K and V, as every result before the axis ran.
AxisSpec page_size_axis() {
  AxisSpec a = integer_axis("page_size", "", "page", "tokens per K/V page: a paged KV cache (default: contiguous K/V)",
                            9, &Problem::page_size);
  a.at_default = [](const Problem& p) { return p.page_size == 0; };
  a.absent_at_default = true;
  return a;
}

std::vector<AxisSpec> make_axis_table() {
  std::vector<AxisSpec> axes;
  axes.push_back(integer_axis("batch", "", "B", "batch sizes", 3, &Problem::batch));
  axes.back().defaults = {int64_t{1}};
  axes.push_back(integer_axis("heads", "", "H", "query heads", 4, &Problem::heads));
  axes.back().defaults = {int64_t{1}};
  axes.push_back(integer_axis("kv_heads", "", "Hkv", "key/value heads, dividing --heads (default: --heads)", 5,
                              &Problem::kv_heads));
  axes.back().follows = "heads";
  axes.push_back(integer_axis("seq", "seq_q", "S", "query sequence lengths", 6, &Problem::seq_q));
  axes.back().defaults = {int64_t{1024}};
  axes.push_back(integer_axis("seq_kv", "", "Skv", "key/value sequence lengths (default: the same as --seq)", 7,
                              &Problem::seq_kv));
  axes.back().follows = "seq";
  axes.push_back(integer_axis("head_dim", "", "D", "head dimensions", 2, &Problem::head_dim));
  axes.back().defaults = {int64_t{64}};

  AxisSpec dtype;
  dtype.name = "dtype";
  dtype.flag = "--dtype";
  dtype.help = "element types: bf16, fp16";
  dtype.type = AxisType::choice;
  dtype.choices = {"bf16", "fp16"};
  dtype.defaults = {std::string("bf16")};
  dtype.nesting = 0;
  dtype.apply = [](Problem& p, const AxisValue& v) { parse_dtype(std::get<std::string>(v), p.dtype); };
  dtype.read = [](const Problem& p) { return AxisValue{std::string(dtype_name(p.dtype))}; };
  axes.push_back(std::move(dtype));

  AxisSpec causal;
  causal.name = "causal";
  causal.flag = "--causal";
  causal.help = "causal mask, top-left aligned (--no-causal: none)";
  causal.type = AxisType::boolean;
  causal.range_tag = "causal";
  causal.defaults = {true};
  causal.nesting = 1;
  causal.apply = [](Problem& p, const AxisValue& v) { p.causal = std::get<bool>(v); };
  causal.read = [](const Problem& p) { return AxisValue{p.causal}; };
  axes.push_back(std::move(causal));

  AxisSpec scale;
  scale.name = "scale";
  scale.flag = "--scale";
  scale.help = "softmax scales (default: 1/sqrt(head dim))";
  scale.type = AxisType::positive_number;
  scale.range_tag = "scale";
  scale.at_default = [](const Problem& p) { return p.scale == 0; };
  scale.nesting = 8;
  scale.apply = [](Problem& p, const AxisValue& v) { p.scale = std::get<double>(v); };
  scale.read = [](const Problem& p) { return AxisValue{p.softmax_scale()}; };
  axes.push_back(std::move(scale));
  axes.push_back(page_size_axis());

  AxisSpec pass;
  pass.name = "pass";
  pass.flag = "--pass";
  pass.help = "passes to time: fwd (the forward), bwd (the backward alone, from a saved forward), "
              "fwd+bwd (both, as a training step)";
  pass.type = AxisType::choice;
  pass.choices = {"fwd", "bwd", "fwd+bwd"};
  // No defaults: a result file from before the axis has no "pass" and is a forward.
  pass.at_default = [](const Problem& p) { return p.pass == AttentionPass::forward; };
  pass.nesting = 10;
  pass.apply = [](Problem& p, const AxisValue& v) { parse_pass(std::get<std::string>(v), p.pass); };
  pass.read = [](const Problem& p) { return AxisValue{std::string(pass_name(p.pass))}; };
  axes.push_back(std::move(pass));

  AxisSpec launch;
  launch.name = "launch";
  launch.flag = "--launch";
  launch.help = "how calls reach the GPU: eager (each launch as the backend makes it), graph (one "
                "call captured into a CUDA graph, its replays timed)";
  launch.type = AxisType::choice;
  launch.choices = {"eager", "graph"};
  // No defaults: a result file from before the axis has no "launch" and ran eagerly.
  launch.at_default = [](const Problem& p) { return p.launch == LaunchMode::eager; };
  launch.nesting = 11;
  launch.apply = [](Problem& p, const AxisValue& v) { parse_launch(std::get<std::string>(v), p.launch); };
  launch.read = [](const Problem& p) { return AxisValue{std::string(launch_name(p.launch))}; };
  axes.push_back(std::move(launch));
  return axes;
}

}  // namespace

const std::vector<AxisSpec>& axis_table() {
  static const std::vector<AxisSpec> table = make_axis_table();
  return table;
}

const AxisSpec* find_axis(const std::vector<AxisSpec>& axes, std::string_view name) {
  for (const AxisSpec& a : axes)
    if (a.name == name) return &a;
  return nullptr;
}

bool axis_present(const AxisSpec& axis, const Problem& p) {
  return !(axis.absent_at_default && axis.at_default && axis.at_default(p));
}

std::string expected_text(const AxisSpec& axis) {
  switch (axis.type) {
    case AxisType::positive_integer:
      return "a positive integer";
    case AxisType::positive_number:
      return "a number > 0";
    case AxisType::boolean:
      return "true or false";
    case AxisType::choice: {
      std::string text;
      for (std::size_t i = 0; i < axis.choices.size(); ++i)
        text += (i == 0 ? "" : (i + 1 == axis.choices.size() ? " or " : ", ")) + axis.choices[i];
      return text;
    }
  }
  return "a value";
}

AxisValue parse_axis_text(const AxisSpec& axis, std::string_view text) {
  const auto fail = [&]() -> AxisValue {
    throw InputError(fmt::format("{}: expected {}, got {}", axis.flag, expected_text(axis), echo(text)));
  };
  switch (axis.type) {
    case AxisType::positive_integer:
      if (const std::optional<int64_t> v = decimal_integer(text); v && *v > 0) return *v;
      return fail();
    case AxisType::positive_number:
      if (const std::optional<double> v = finite_number(text); v && *v > 0) return *v;
      return fail();
    case AxisType::boolean:
      if (text == "true") return true;
      if (text == "false") return false;
      return fail();
    case AxisType::choice:
      for (const std::string& c : axis.choices)
        if (text == c) return c;
      return fail();
  }
  return fail();
}

AxisValue axis_value_from_json(const AxisSpec& axis, const json& value, const std::string& where) {
  const auto fail = [&]() -> AxisValue {
    throw InputError(fmt::format("{}\"{}\": expected {}, got {}", where, axis.name, expected_text(axis), echo(value.dump())));
  };
  switch (axis.type) {
    case AxisType::positive_integer:
      if (!value.is_number_integer()) return fail();
      if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return fail();
      if (value.get<int64_t>() <= 0) return fail();
      return value.get<int64_t>();
    case AxisType::positive_number:
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() <= 0) return fail();
      return value.get<double>();
    case AxisType::boolean:
      if (!value.is_boolean()) return fail();
      return value.get<bool>();
    case AxisType::choice:
      if (!value.is_string()) return fail();
      for (const std::string& c : axis.choices)
        if (value.get<std::string>() == c) return c;
      return fail();
  }
  return fail();
}

json axis_value_to_json(const AxisValue& value) {
  return std::visit([](const auto& v) { return json(v); }, value);
}

std::string axis_value_text(const AxisValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>) return v;
        else return fmt::format("{}", v);
      },
      value);
}

}  // namespace sdpa
