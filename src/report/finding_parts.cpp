#include "report/finding_parts.h"

#include <cctype>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "model/counters.h"
#include "model/number_text.h"

namespace sdpa {
namespace {

// The number right before `marker` in a finding's text ("4 kernels per" -> "4").
std::optional<std::string> number_before(const std::string& text, std::string_view marker) {
  const std::size_t at = text.find(marker);
  if (at == std::string::npos || at == 0) return std::nullopt;
  std::size_t start = at;
  while (start > 0 && (std::isdigit(static_cast<unsigned char>(text[start - 1])) || text[start - 1] == '.')) --start;
  if (start == at) return std::nullopt;
  return text.substr(start, at - start);
}

// "4 kernels, 241 us" from a finding's "4 kernels per forward, 241.1 us (...)"; the parts the text
// does not have are left out.
std::string count_and_time(const std::string& text, std::string_view count_marker, std::string_view noun) {
  std::vector<std::string> parts;
  if (const std::optional<std::string> n = number_before(text, count_marker)) parts.push_back(*n + std::string(noun));
  if (const std::optional<std::string> us = number_before(text, " us ("))
    if (const std::optional<double> value = finite_number(*us)) parts.push_back(duration_text(*value));
  return parts.size() == 2 ? parts[0] + ", " + parts[1] : parts.empty() ? "" : parts[0];
}

std::string copies_figure(const CaseProfile& p) {
  for (const MemcpyProfile& m : p.memcpys)
    if (m.kind == "DtoD" && m.per_forward > 0)
      return m.per_forward == 1 ? fmt::format("{}, {}", bytes_text(m.bytes_per_forward), duration_text(m.mean_us))
                                : fmt::format("{:g} of {}, {} each", m.per_forward,
                                              bytes_text(m.bytes_per_forward / m.per_forward), duration_text(m.mean_us));
  return "";
}

std::string simt_share(const CaseProfile& p) {
  double simt_us = 0;
  double total_us = 0;
  for (const KernelProfile& k : p.kernels) {
    total_us += k.us_per_forward();
    if (k.category == KernelCategory::simt_gemm) simt_us += k.us_per_forward();
  }
  return total_us > 0 ? fmt::format("{:.0f}%", 100 * simt_us / total_us) : "";
}

// The kernel a finding names: the longest of the profile's names its text holds.
const KernelProfile* named_kernel(const Finding& f, const CaseProfile& p) {
  const KernelProfile* named = nullptr;
  for (const KernelProfile& k : p.kernels)
    if (f.text.find(k.name) != std::string::npos && (!named || k.name.size() > named->name.size())) named = &k;
  return named;
}

// "power-limited: median SM clock 1690 MHz, 85% of the 1980 MHz peak; 650 W ..." in parts: the
// reason, the peak, and this case's clock.
FindingParts clock_parts(const Finding& f) {
  const std::size_t colon = f.text.find(": ");
  const std::optional<std::string> mhz = number_before(f.text, " MHz, ");
  const std::optional<std::string> percent = number_before(f.text, "% of the ");
  const std::optional<std::string> peak = number_before(f.text, " MHz peak");
  if (colon == std::string::npos || !mhz || !percent || !peak) return {};
  return {f.text.substr(0, colon) + ", median SM clock", "(of the " + *peak + " MHz peak)",
          fmt::format("{} MHz, {}%", *mhz, *percent)};
}

}  // namespace

std::string bytes_text(double bytes) {
  constexpr double kMiB = 1024.0 * 1024.0;
  return bytes >= 1024 * kMiB ? fmt::format("{:.1f} GiB", bytes / (1024 * kMiB)) : fmt::format("{:.0f} MiB", bytes / kMiB);
}

std::string duration_text(double us) {
  return us >= 1000 ? fmt::format("{:.2f} ms", us / 1000) : fmt::format("{:.0f} us", us);
}

FindingParts finding_parts(const Finding& f, const CaseProfile* p, AttentionPass pass, bool brief) {
  if (brief && p && f.rule == "hidden-memcpy")
    return {fmt::format("hidden device-to-device copy per {}", pass_call_name(pass)),
            "(an out-of-place op, such as masked_fill, copies its input first)", copies_figure(*p)};
  if (brief && p && f.rule == "simt-gemm") return {"fp32 SIMT GEMMs, tensor cores idle", "(share of kernel time)", simt_share(*p)};
  if (brief && f.rule == "mask-every-call")
    return {"causal mask rebuilt on every call", "",
            count_and_time(f.text, " kernels per ", " kernels")};
  if (brief && f.rule == "safe-softmax")
    return {"safe softmax", "(eq -inf, all, where beside the softmax)",
            count_and_time(f.text, " extra kernels", " extra kernels")};
  if (const KernelProfile* k = brief && p && f.rule == "low-occupancy" ? named_kernel(f, *p) : nullptr; k && k->occupancy)
    return {"low occupancy, limited by " + limiter_text(k->occupancy->limiters), "",
            fmt::format("{} at {:.3g}% theoretical", k->name, 100 * k->occupancy->theoretical)};
  if (const KernelProfile* k = brief && p && f.rule == "tensor-idle" ? named_kernel(f, *p) : nullptr)
    if (const std::optional<double> busy = counter_value(k->counters, CounterRole::tensor_active))
      return {"tensor pipes busy under half the kernel's time", "", fmt::format("{}, {:.1f}%", k->name, *busy)};
  if (brief && f.rule == "low-clock")
    if (FindingParts parts = clock_parts(f); !parts.what.empty()) return parts;
  const std::size_t colon = f.text.find(": ");
  if (colon == std::string::npos) return {f.text, "", ""};
  return {f.text.substr(0, colon), "", f.text.substr(colon + 2)};
}

}  // namespace sdpa
