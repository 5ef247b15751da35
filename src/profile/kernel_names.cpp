#include "profile/kernel_names.h"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <string_view>

namespace sdpa {
namespace {

bool contains_any(const std::string& text, std::initializer_list<std::string_view> patterns) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](std::string_view p) { return text.find(p) != std::string::npos; });
}

// Cuts a trailing argument list: "f<int>(int, float)" -> "f<int>".
std::string without_arguments(std::string s) {
  if (s.ends_with(" const")) s.resize(s.size() - 6);
  if (s.empty() || s.back() != ')') return s;
  int depth = 0;
  for (std::size_t i = s.size(); i-- > 0;) {
    if (s[i] == ')') ++depth;
    if (s[i] == '(' && --depth == 0) return s.substr(0, i);
  }
  return s;
}

// Drops what precedes the last space outside brackets: a template function's return type.
std::string without_return_type(const std::string& s) {
  int depth = 0;
  std::size_t cut = std::string::npos;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if (c == '>' || c == ')' || c == ']' || c == '}') --depth;
    if (c == ' ' && depth == 0) cut = i;
  }
  return cut == std::string::npos ? s : s.substr(cut + 1);
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Drops every qualifier before "::" ("(anonymous namespace)" or an identifier) in one pass: a
// name of a million characters costs a million steps, and nothing recurses.
std::string without_namespaces(std::string_view s) {
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "::") != 0) {
      out.push_back(s[i++]);
      continue;
    }
    if (out.ends_with(kAnonymous)) {
      out.resize(out.size() - kAnonymous.size());
      i += 2;
      continue;
    }
    // The identifier before "::": the run of word characters, less leading digits.
    std::size_t start = out.size();
    while (start > 0 && is_word_char(out[start - 1])) --start;
    while (start < out.size() && std::isdigit(static_cast<unsigned char>(out[start])) != 0) ++start;
    if (start < out.size())
      out.resize(start);
    else
      out.append("::");
    i += 2;
  }
  return out;
}

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::string demangle(const std::string& name) {
  // The demangler recurses per nesting level: a hostile name of that size is kept as it is.
  constexpr std::size_t kMaxDemangledChars = std::size_t{1} << 16;
  if (name.size() > kMaxDemangledChars) return name;
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> text(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && text ? std::string(text.get()) : name;
}

std::string shorten_kernel_name(const std::string& demangled, std::size_t max_chars) {
  std::string s = without_namespaces(without_return_type(without_arguments(demangled)));
  if (s.size() > max_chars && max_chars > 3) s = s.substr(0, max_chars - 3) + "...";
  return s;
}

KernelCategory categorize_kernel(const std::string& demangled) {
  // Namespaces out first: this tool's own kernels live in `sdpa::`.
  const std::string n = lowercase(shorten_kernel_name(demangled, std::string::npos));
  if (contains_any(n, {"flash", "fmha", "attention", "attn", "sdpa", "efficient_fwd"}))
    return KernelCategory::fused_attention;
  // nvjet_*: cuBLAS's generated Hopper tensor-core GEMMs (what it picks for bf16/fp16 on sm_90).
  if (contains_any(n, {"gemm", "xmma", "cutlass", "gemv", "matmul", "nvjet"})) {
    // cuBLAS names the operand types: f32f32_f32f32 is fp32 in and out, sgemm/simt the CUDA-core path.
    // ffma: the fp32 FMA path, as in sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_..._ffma_... on the H200.
    if (contains_any(n, {"sgemm", "simt", "f32f32_f32f32", "_ffma"})) return KernelCategory::simt_gemm;
    return KernelCategory::tensor_core_gemm;
  }
  if (n.find("softmax") != std::string::npos) return KernelCategory::softmax;
  if (contains_any(n, {"reduce", "reduction", "all_rows"})) return KernelCategory::reduction;
  if (contains_any(n, {"copy", "memcpy"})) return KernelCategory::copy;
  if (contains_any(n, {"elementwise", "fill", "scale", "mask", "where", "equal", "tril", "triu", "logical",
                       "cast", "poison"}))
    return KernelCategory::elementwise;
  return KernelCategory::other;
}

}  // namespace sdpa
