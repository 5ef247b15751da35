#include "result.h"

#include <algorithm>
#include <iterator>

namespace sdpa {

const char* status_name(CaseStatus s) {
  switch (s) {
    case CaseStatus::ok:
      return "ok";
    case CaseStatus::skipped:
      return "skipped";
    case CaseStatus::failed:
      return "failed";
  }
  return "unknown";
}

namespace {

struct CategoryNames {
  KernelCategory category;
  const char* id;
  const char* name;
};

constexpr CategoryNames kCategories[] = {
    {KernelCategory::tensor_core_gemm, "tensor_core_gemm", "tensor-core GEMM"},
    {KernelCategory::simt_gemm, "simt_gemm", "SIMT fp32 GEMM"},
    {KernelCategory::elementwise, "elementwise", "elementwise"},
    {KernelCategory::reduction, "reduction", "reduction"},
    {KernelCategory::softmax, "softmax", "softmax"},
    {KernelCategory::fused_attention, "fused_attention", "fused attention"},
    {KernelCategory::copy, "copy", "copy"},
    {KernelCategory::other, "other", "other"},
};

const CategoryNames& names_of(KernelCategory c) {
  for (const CategoryNames& n : kCategories)
    if (n.category == c) return n;
  return kCategories[std::size(kCategories) - 1];
}

template <typename Field>
double mean_over_forwards(const std::vector<ForwardProfile>& forwards, Field field) {
  if (forwards.empty()) return 0;
  double sum = 0;
  for (const ForwardProfile& f : forwards) sum += field(f);
  return sum / static_cast<double>(forwards.size());
}

}  // namespace

const char* category_name(KernelCategory c) { return names_of(c).name; }
const char* category_id(KernelCategory c) { return names_of(c).id; }

bool parse_category_id(const std::string& id, KernelCategory& out) {
  for (const CategoryNames& n : kCategories)
    if (id == n.id) {
      out = n.category;
      return true;
    }
  return false;
}

double CaseProfile::kernels_per_forward() const {
  return mean_over_forwards(forwards, [](const ForwardProfile& f) { return f.kernels; });
}

double CaseProfile::memcpys_per_forward() const {
  return mean_over_forwards(forwards, [](const ForwardProfile& f) { return f.memcpys; });
}

double CaseProfile::memsets_per_forward() const {
  return mean_over_forwards(forwards, [](const ForwardProfile& f) { return f.memsets; });
}

const KernelProfile* CaseProfile::dominant_kernel() const {
  const auto most = std::max_element(kernels.begin(), kernels.end(), [](const KernelProfile& a, const KernelProfile& b) {
    return a.us_per_forward() < b.us_per_forward();
  });
  return most == kernels.end() ? nullptr : &*most;
}

double CaseResult::tflops() const {
  if (!timing || timing->median_ms <= 0) return 0;
  return problem.flops() / (timing->median_ms * 1e-3) / 1e12;
}

double CaseResult::achieved_tb_per_s() const {
  if (!timing || timing->median_ms <= 0) return 0;
  return problem.min_bytes() / (timing->median_ms * 1e-3) / 1e12;
}

bool RunReport::any_failed() const {
  return std::any_of(cases.begin(), cases.end(),
                     [](const CaseResult& c) { return c.status == CaseStatus::failed; });
}

}  // namespace sdpa
