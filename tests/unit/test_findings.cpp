// The findings' rules on profiles shaped like the unfused and fused backends'.
#include <gtest/gtest.h>

#include <algorithm>

#include "profile/findings.h"

namespace sdpa {
namespace {

KernelProfile kernel(const std::string& name, KernelCategory category, double us, double occupancy = 1.0) {
  KernelProfile k;
  k.name = name;
  k.category = category;
  k.per_forward = 1;
  k.mean_us = us;
  k.block = Dim3{256, 1, 1};
  OccupancyEstimate o;
  o.theoretical = occupancy;
  o.profiler_style = occupancy;
  o.blocks_per_sm = 8;
  o.limiters = kLimitWarps;
  k.occupancy = o;
  return k;
}

const Finding* find_rule(const std::vector<Finding>& findings, const std::string& rule) {
  const auto it = std::find_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.rule == rule; });
  return it == findings.end() ? nullptr : &*it;
}

CaseProfile with_forward(CaseProfile p) {
  ForwardProfile f;
  for (const KernelProfile& k : p.kernels) f.kernels += static_cast<int>(k.per_forward);
  for (const MemcpyProfile& m : p.memcpys) f.memcpys += static_cast<int>(m.per_forward);
  p.forwards = {f};
  return p;
}

TEST(Findings, NaiveHiddenCopyAndCublasOccupancy) {
  CaseProfile p;
  KernelProfile gemm = kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", KernelCategory::tensor_core_gemm, 300, 0.1875);
  gemm.block = Dim3{384, 1, 1};
  gemm.registers_per_thread = 168;
  gemm.dynamic_shared = 134 * 1024;
  gemm.occupancy->blocks_per_sm = 1;
  gemm.occupancy->limiters = kLimitRegisters | kLimitSharedMemory;
  gemm.occupancy->profiler_style = 0;
  p.kernels = {gemm, kernel("scale_kernel<__nv_bfloat16>", KernelCategory::elementwise, 100),
               kernel("masked_fill_kernel<__nv_bfloat16>", KernelCategory::elementwise, 100),
               kernel("softmax_rows_in_registers_kernel<__nv_bfloat16, 4>", KernelCategory::softmax, 200)};
  p.memcpys = {MemcpyProfile{"DtoD", 1, 32 << 20, 20}};
  const std::vector<Finding> f = profile_findings(with_forward(p), AttentionPass::forward);
  ASSERT_NE(find_rule(f, "hidden-memcpy"), nullptr);
  EXPECT_NE(find_rule(f, "hidden-memcpy")->text.find("32.0 MiB"), std::string::npos);
  const Finding* low = find_rule(f, "low-occupancy");
  ASSERT_NE(low, nullptr);
  EXPECT_NE(low->text.find("18.8% theoretical"), std::string::npos) << low->text;
  EXPECT_NE(low->text.find("registers, shared memory"), std::string::npos);
  EXPECT_NE(low->text.find("48 KB default"), std::string::npos);
  EXPECT_EQ(find_rule(f, "simt-gemm"), nullptr);
  EXPECT_EQ(find_rule(f, "safe-softmax"), nullptr);
  EXPECT_EQ(find_rule(f, "fused-extra-kernels"), nullptr);
}

TEST(Findings, MathPathSimtGemmMaskAndSafeSoftmax) {
  CaseProfile p;
  p.kernels = {kernel("fill_kernel<bool>", KernelCategory::elementwise, 5),
               kernel("tril_kernel", KernelCategory::elementwise, 5),
               kernel("logical_not_kernel", KernelCategory::elementwise, 5),
               kernel("where_scalar_kernel", KernelCategory::elementwise, 5),
               kernel("sm90_xmma_gemm_f32f32_f32f32_f32_nn_n", KernelCategory::simt_gemm, 800),
               kernel("softmax_rows_in_registers_kernel<float, 4>", KernelCategory::softmax, 100),
               kernel("isneginf_kernel", KernelCategory::elementwise, 50),
               kernel("all_rows_kernel", KernelCategory::reduction, 50),
               kernel("where_rows_kernel", KernelCategory::elementwise, 50)};
  const std::vector<Finding> f = profile_findings(with_forward(p), AttentionPass::forward);
  ASSERT_NE(find_rule(f, "simt-gemm"), nullptr);
  EXPECT_NE(find_rule(f, "simt-gemm")->text.find("tensor cores idle"), std::string::npos);
  ASSERT_NE(find_rule(f, "mask-every-call"), nullptr);
  EXPECT_NE(find_rule(f, "mask-every-call")->text.find("4 kernels per forward"), std::string::npos);
  ASSERT_NE(find_rule(f, "safe-softmax"), nullptr);
  EXPECT_NE(find_rule(f, "safe-softmax")->text.find("3 extra kernels"), std::string::npos);
  EXPECT_EQ(find_rule(f, "hidden-memcpy"), nullptr);
  EXPECT_EQ(find_rule(f, "low-occupancy"), nullptr);
}

TEST(Findings, FusedBackendWithExtraKernelsAndDroppedRecords) {
  CaseProfile p;
  p.kernels = {kernel("flash_fwd_kernel<64>", KernelCategory::fused_attention, 150),
               kernel("fill_kernel<float>", KernelCategory::elementwise, 3)};
  p.dropped_records = 12;
  const std::vector<Finding> f = profile_findings(with_forward(p), AttentionPass::forward);
  ASSERT_NE(find_rule(f, "fused-extra-kernels"), nullptr);
  EXPECT_NE(find_rule(f, "fused-extra-kernels")->text.find("2 kernels per forward"), std::string::npos);
  EXPECT_NE(find_rule(f, "dropped-records"), nullptr);

  // A backward's counts are per backward, and say so.
  const std::vector<Finding> backward = profile_findings(with_forward(p), AttentionPass::backward);
  ASSERT_NE(find_rule(backward, "fused-extra-kernels"), nullptr);
  EXPECT_NE(find_rule(backward, "fused-extra-kernels")->text.find("2 kernels per backward, not 1"),
            std::string::npos);

  p.kernels.pop_back();
  p.dropped_records = 0;
  EXPECT_TRUE(profile_findings(with_forward(p), AttentionPass::forward).empty());
}

}  // namespace
}  // namespace sdpa
