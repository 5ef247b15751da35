#include "model/roofline.h"

#include <algorithm>

#include <fmt/format.h>

#include "model/counters.h"

namespace sdpa {
namespace {

// Measured DRAM bytes past the minimum by more than this share are named as a reason.
constexpr double kExtraDramShare = 0.1;

std::string gigabytes(double bytes) { return fmt::format("{:.3g} GB", bytes / 1e9); }

}  // namespace

const char* ceiling_id(Ceiling c) { return c == Ceiling::read_bandwidth ? "read_bandwidth" : "compute"; }

double compute_ceiling_tflops(const Ceilings& ceilings, DType dtype) {
  return dtype == DType::bf16 ? ceilings.bf16_gemm_tflops : ceilings.fp16_gemm_tflops;
}

std::optional<PeakShare> peak_share(const CaseResult& c, const Ceilings& ceilings) {
  const double compute = compute_ceiling_tflops(ceilings, c.problem.dtype);
  if (!c.timing || c.timing->median_ms <= 0 || compute <= 0) return std::nullopt;
  PeakShare s;
  s.intensity = c.problem.flops() / c.problem.min_bytes();
  if (ceilings.read_tb_per_s > 0) {
    s.ridge = compute / ceilings.read_tb_per_s;  // (TFLOP/s) / (TB/s) = FLOP per byte
    if (s.intensity < s.ridge) s.ceiling = Ceiling::read_bandwidth;
  }
  s.percent = s.ceiling == Ceiling::read_bandwidth ? 100 * c.achieved_tb_per_s() / ceilings.read_tb_per_s
                                       : 100 * c.tflops() / compute;
  return s;
}

std::vector<Finding> bandwidth_findings(const CaseResult& c, const Ceilings& ceilings, int sm_count) {
  const std::optional<PeakShare> share = peak_share(c, ceilings);
  if (!share || share->ceiling != Ceiling::read_bandwidth || share->percent >= 100 * kFarFromReadCeiling) return {};
  std::string text = fmt::format("far from the HBM read ceiling: {:.2f} TB/s, {:.0f}% of the {:.2f} TB/s measured",
                                 c.achieved_tb_per_s(), share->percent, ceilings.read_tb_per_s);
  const KernelProfile* top = c.profile ? c.profile->dominant_kernel() : nullptr;
  if (top != nullptr && sm_count > 0 && top->grid.count() < sm_count)
    text += fmt::format("; {} CTAs for {} SMs", top->grid.count(), sm_count);
  if (top != nullptr && top->category == KernelCategory::fused_attention && c.problem.seq_q < kMinMmaRows) {
    text += fmt::format("; Sq {}: a query tile of one head's rows fills at most {} of the {} rows of an MMA",
                        c.problem.seq_q, c.problem.seq_q, kMinMmaRows);
    if (c.problem.group_size() > 1)
      text += fmt::format(" ({} with the {} query heads of a K/V head packed)",
                          std::min<int64_t>(kMinMmaRows, c.problem.seq_q * c.problem.group_size()),
                          c.problem.group_size());
  }
  if (const std::optional<double> dram = c.profile ? dram_bytes_per_forward(*c.profile) : std::nullopt;
      dram && *dram > (1 + kExtraDramShare) * c.problem.min_bytes())
    text += fmt::format("; DRAM moved {} against the {} minimum ({:.2f}x)", gigabytes(*dram),
                        gigabytes(c.problem.min_bytes()), *dram / c.problem.min_bytes());
  return {Finding{"far-from-read-ceiling", text}};
}

}  // namespace sdpa
