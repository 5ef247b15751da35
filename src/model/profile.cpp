#include "model/profile.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string_view>
#include <utility>

namespace sdpa {
namespace {

constexpr std::pair<unsigned, const char*> kLimiterNames[] = {
    {kLimitRegisters, "registers"}, {kLimitSharedMemory, "shared memory"}, {kLimitWarps, "warps"},
    {kLimitBlocks, "blocks"},       {kLimitBarriers, "barriers"},
};


constexpr std::string_view kLibraryNameParts[] = {"gemm", "gemv", "xmma", "nvjet", "cutlass", "cublas", "cudnn"};

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

std::vector<std::string> limiter_names(unsigned limiters) {
  std::vector<std::string> names;
  for (const auto& [flag, name] : kLimiterNames)
    if ((limiters & flag) != 0) names.emplace_back(name);
  return names;
}

unsigned limiter_flag(const std::string& name) {
  for (const auto& [flag, known] : kLimiterNames)
    if (name == known) return flag;
  return 0;
}

bool library_kernel(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // cuBLAS's GEMMs (sm80_xmma_gemm_*, nvjet_*, cutlass_*) and cuDNN's generated kernels.
  return std::any_of(std::begin(kLibraryNameParts), std::end(kLibraryNameParts),
                     [&](std::string_view part) { return n.find(part) != std::string::npos; });
}

std::string limiter_text(unsigned limiters) {
  std::string text;
  for (const std::string& name : limiter_names(limiters)) {
    text += text.empty() ? "" : ", ";
    text += name;
  }
  return text;
}


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

double CaseProfile::kernel_us_per_forward() const {
  return mean_over_forwards(forwards, [](const ForwardProfile& f) { return f.kernel_us; });
}

double CaseProfile::wall_us_per_forward() const {
  return mean_over_forwards(forwards, [](const ForwardProfile& f) { return f.wall_us; });
}

const KernelProfile* CaseProfile::dominant_kernel() const {
  const auto most = std::max_element(kernels.begin(), kernels.end(), [](const KernelProfile& a, const KernelProfile& b) {
    return a.us_per_forward() < b.us_per_forward();
  });
  return most == kernels.end() ? nullptr : &*most;
}

}  // namespace sdpa
