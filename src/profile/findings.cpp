#include "profile/findings.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <optional>
#include <string_view>

#include <fmt/format.h>

namespace sdpa {
namespace {

constexpr double kLowOccupancy = 0.25;      // theoretical, below which a kernel is flagged
constexpr double kSignificantShare = 0.10;  // of the forward's kernel time
constexpr int kDefaultSharedLimit = 48 * 1024;
constexpr double kTensorBusy = 50;          // % of a GEMM-like kernel's cycles, below which the pipes idle
constexpr double kAchievedShare = 0.75;     // of theoretical occupancy, below which achieved is "far below"

bool name_has_any(const KernelProfile& k, std::initializer_list<std::string_view> patterns) {
  std::string name = k.name;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::any_of(patterns.begin(), patterns.end(), [&](std::string_view p) { return name.find(p) != std::string::npos; });
}

double kernel_us_per_forward(const CaseProfile& p) {
  double us = 0;
  for (const KernelProfile& k : p.kernels) us += k.us_per_forward();
  return us;
}

// The kernels a rule picked: count per forward, time per forward, and their names.
struct Selection {
  double per_forward = 0;
  double us = 0;
  std::string names;

  void add(const KernelProfile& k) {
    per_forward += k.per_forward;
    us += k.us_per_forward();
    names += names.empty() ? "" : ", ";
    names += k.name;
  }
};

template <typename Pred>
Selection select(const CaseProfile& p, Pred pred) {
  Selection s;
  for (const KernelProfile& k : p.kernels)
    if (pred(k)) s.add(k);
  return s;
}

void hidden_copies(const CaseProfile& p, const char* call, std::vector<Finding>& out) {
  for (const MemcpyProfile& m : p.memcpys)
    if (m.kind == "DtoD")
      out.push_back(
          {"hidden-memcpy",
           fmt::format("hidden device-to-device memcpy: {:g} per {}, {:.1f} MiB, {:.1f} us each "
                       "(an out-of-place op, such as masked_fill, copies its input first)",
                       m.per_forward, call, m.bytes_per_forward / m.per_forward / 1048576.0,
                       m.mean_us)});
}

void simt_gemms(const CaseProfile& p, double total_us, const char* call,
                std::vector<Finding>& out) {
  const Selection s = select(p, [](const KernelProfile& k) { return k.category == KernelCategory::simt_gemm; });
  if (s.per_forward == 0) return;
  out.push_back({"simt-gemm",
                 fmt::format("fp32 SIMT GEMM: {:g} kernels per {}, {:.0f}% of kernel time, tensor "
                             "cores idle ({})",
                             s.per_forward, call, 100 * s.us / total_us, s.names)});
}

void mask_every_call(const CaseProfile& p, const char* call, std::vector<Finding>& out) {
  if (!std::any_of(p.kernels.begin(), p.kernels.end(),
                   [](const KernelProfile& k) { return name_has_any(k, {"tril", "triu"}); }))
    return;
  const Selection s = select(p, [](const KernelProfile& k) {
    // ones(bool) -> tril -> (logical_not, before PyTorch 2.11) -> where: this tool's names and PyTorch's.
    return name_has_any(k, {"fill_kernel<bool>", "fillfunctor<bool>", "tril", "triu", "logical_not", "where_scalar",
                            "causal_mask"});
  });
  out.push_back({"mask-every-call",
                 fmt::format("causal mask built on every call: {:g} kernels per {}, {:.1f} us ({})",
                             s.per_forward, call, s.us, s.names)});
}

void safe_softmax(const CaseProfile& p, const char* call, std::vector<Finding>& out) {
  if (!std::any_of(p.kernels.begin(), p.kernels.end(),
                   [](const KernelProfile& k) { return k.category == KernelCategory::softmax; }))
    return;
  const Selection s = select(p, [](const KernelProfile& k) {
    return name_has_any(k, {"equal", "isneginf", "all_rows", "where_rows"});
  });
  if (s.per_forward == 0) return;
  out.push_back(
      {"safe-softmax", fmt::format("safe softmax: {:g} extra kernels per {} beside the softmax "
                                   "(eq -inf, all, where), {:.1f} us ({})",
                                   s.per_forward, call, s.us, s.names)});
}

void low_occupancy(const CaseProfile& p, double total_us, std::vector<Finding>& out) {
  for (const KernelProfile& k : p.kernels) {
    if (!k.occupancy || k.occupancy->theoretical >= kLowOccupancy || k.us_per_forward() < kSignificantShare * total_us)
      continue;
    const OccupancyEstimate& o = *k.occupancy;
    std::string text = fmt::format(
        "low occupancy: {} at {:.1f}% theoretical ({} block(s) of {} threads per SM), limited by {} ({} registers per "
        "thread, {:.1f} KB shared memory per block)",
        k.name, 100 * o.theoretical, o.blocks_per_sm, k.block.count(), limiter_text(o.limiters),
        k.registers_per_thread, (k.static_shared + k.dynamic_shared) / 1024.0);
    if (o.profiler_style == 0 && o.theoretical > 0 && k.static_shared + k.dynamic_shared > kDefaultSharedLimit)
      text += "; PyTorch's profiler shows 0% because it assumes the 48 KB default shared-memory limit";
    out.push_back({"low-occupancy", text});
  }
}

void fused_but_several(const CaseProfile& p, const char* call, std::vector<Finding>& out) {
  const Selection fused = select(p, [](const KernelProfile& k) { return k.category == KernelCategory::fused_attention; });
  const double kernels = p.kernels_per_forward();
  if (fused.per_forward == 0 || kernels <= 1) return;
  const Selection others = select(p, [](const KernelProfile& k) { return k.category != KernelCategory::fused_attention; });
  out.push_back(
      {"fused-extra-kernels",
       fmt::format("fused backend launches {:g} kernels per {}, not 1: {:.1f} us "
                   "outside the fused kernel ({})",
                   kernels, call, others.us, others.names.empty() ? fused.names : others.names)});
}

void dram_bound(const CaseProfile& p, const Problem& problem, std::vector<Finding>& out) {
  const std::optional<ForwardBound> bound = forward_bound(p);
  const std::optional<double> bytes = dram_bytes_per_forward(p);
  if (!bound || bound->bound != Bound::dram || !bytes) return;
  std::string text = fmt::format(
      "DRAM-bound: {:.0f}% of peak DRAM bandwidth (SM {:.0f}%), {:.3f} GB per {} "
      "against {:.3f} GB minimum ({:.1f}x)",
      bound->dram_pct, bound->sm_pct, *bytes / 1e9, pass_call_name(problem.pass),
      problem.min_bytes() / 1e9, *bytes / problem.min_bytes());
  if (p.counters && p.counters->expected_dram_bytes && *p.counters->expected_dram_bytes > 0)
    text += fmt::format("; the backend's own count of its passes: {:.3f} GB (measured {:+.1f}%)",
                        *p.counters->expected_dram_bytes / 1e9,
                        100 * (*bytes / *p.counters->expected_dram_bytes - 1));
  out.push_back({"dram-bound", text});
}

void tensor_idle(const CaseProfile& p, double total_us, std::vector<Finding>& out) {
  for (const KernelProfile& k : p.kernels) {
    if (k.category != KernelCategory::simt_gemm && k.category != KernelCategory::fused_attention) continue;
    const std::optional<double> active = counter_value(k.counters, CounterRole::tensor_active);
    if (!active || *active >= kTensorBusy || k.us_per_forward() < kSignificantShare * total_us) continue;
    out.push_back({"tensor-idle", fmt::format("tensor pipes busy under half the kernel's time: {} ({}), {:.1f}%", k.name,
                                              category_name(k.category), *active)});
  }
}

void achieved_below_theoretical(const CaseProfile& p, double total_us, int sm_count, std::vector<Finding>& out) {
  for (const KernelProfile& k : p.kernels) {
    const std::optional<double> achieved = counter_value(k.counters, CounterRole::achieved_occupancy);
    if (!achieved || !k.occupancy || k.occupancy->theoretical <= 0 || k.us_per_forward() < kSignificantShare * total_us)
      continue;
    const double theoretical = 100 * k.occupancy->theoretical;
    if (*achieved >= kAchievedShare * theoretical) continue;
    std::string text = fmt::format("achieved occupancy far below theoretical (tail effect or imbalance): {}, {:.1f}% "
                                   "against {:.1f}%",
                                   k.name, *achieved, theoretical);
    if (const int64_t slots = int64_t{k.occupancy->blocks_per_sm} * sm_count; slots > 0)
      text += fmt::format(", {} blocks in {:.2f} waves of {} on {} SMs", k.grid.count(),
                          static_cast<double>(k.grid.count()) / static_cast<double>(slots), slots, sm_count);
    out.push_back({"achieved-occupancy", text});
  }
}

}  // namespace

std::vector<Finding> counter_findings(const CaseProfile& p, const Problem& problem, int sm_count) {
  std::vector<Finding> out;
  const double total_us = kernel_us_per_forward(p);
  dram_bound(p, problem, out);
  if (total_us > 0) {
    tensor_idle(p, total_us, out);
    achieved_below_theoretical(p, total_us, sm_count, out);
  }
  return out;
}

std::vector<Finding> profile_findings(const CaseProfile& p, AttentionPass pass) {
  std::vector<Finding> out;
  const double total_us = kernel_us_per_forward(p);
  const char* call = pass_call_name(pass);
  hidden_copies(p, call, out);
  if (total_us > 0) {
    simt_gemms(p, total_us, call, out);
    low_occupancy(p, total_us, out);
  }
  mask_every_call(p, call, out);
  safe_softmax(p, call, out);
  fused_but_several(p, call, out);
  if (p.dropped_records > 0)
    out.push_back({"dropped-records", fmt::format("CUPTI dropped {} activity records: the counts above are lower bounds",
                                                  p.dropped_records)});
  return out;
}

}  // namespace sdpa
