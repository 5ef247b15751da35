#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "profile/kernel_names.h"

namespace sdpa {
namespace {

TEST(KernelNames, DemanglesAndShortensThisToolsKernels) {
  const std::string scale = demangle("_ZN4sdpa47_GLOBAL__N__d85400ed_14_elementwise_cu_003d782412scale_kernelI6__halfEEvPKT_PS3_lf");
  EXPECT_EQ(scale, "void sdpa::(anonymous namespace)::scale_kernel<__half>(__half const*, __half*, long, float)");
  EXPECT_EQ(shorten_kernel_name(scale), "scale_kernel<__half>");
  const std::string tril = demangle("_ZN4sdpa47_GLOBAL__N__d85400ed_14_elementwise_cu_003d782411tril_kernelEPKbPbll");
  EXPECT_EQ(shorten_kernel_name(tril), "tril_kernel");
}

TEST(KernelNames, ShortensPyTorchKernelsAndKeepsPlainNames) {
  const std::string fill = demangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_");
  EXPECT_EQ(shorten_kernel_name(fill), "vectorized_elementwise_kernel<4, FillFunctor<float>, array<char*, 1ul> >");
  const std::string cublas = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
  EXPECT_EQ(demangle(cublas), cublas);
  EXPECT_EQ(shorten_kernel_name(cublas, 40), "sm90_xmma_gemm_bf16bf16_bf16f32_f32_t...");
  EXPECT_EQ(shorten_kernel_name(cublas, 200), cublas);
}

TEST(KernelNames, Categories) {
  EXPECT_EQ(categorize_kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"),
            KernelCategory::tensor_core_gemm);
  EXPECT_EQ(categorize_kernel("sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas"),
            KernelCategory::simt_gemm);
  EXPECT_EQ(categorize_kernel("ampere_sgemm_128x64_tn"), KernelCategory::simt_gemm);
  EXPECT_EQ(categorize_kernel("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"), KernelCategory::tensor_core_gemm);
  EXPECT_EQ(categorize_kernel("void sdpa::(anonymous namespace)::efficient_fwd_kernel<sdpa::EfficientTraits<64>, __nv_bfloat16, true>(sdpa::FusedParams)"),
            KernelCategory::fused_attention);
  EXPECT_EQ(categorize_kernel("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>(cutlass_80_simt_sgemm_128x64_8x5_nn_align1::Params)"),
            KernelCategory::simt_gemm);
  EXPECT_EQ(categorize_kernel("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(Params)"),
            KernelCategory::tensor_core_gemm);
  EXPECT_EQ(categorize_kernel("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4> >(Flash_fwd_params)"),
            KernelCategory::fused_attention);
  EXPECT_EQ(categorize_kernel("cudnn_generated_fort_native_sdpa_sm90_knob_7_64x128x64_4x1x1_kernel0_0"),
            KernelCategory::fused_attention);
  EXPECT_EQ(categorize_kernel("void sdpa::(anonymous namespace)::softmax_rows_in_registers_kernel<float, 4>(float const*, float*, long)"),
            KernelCategory::softmax);
  EXPECT_EQ(categorize_kernel("sdpa::(anonymous namespace)::all_rows_kernel(bool const*, bool*, long)"), KernelCategory::reduction);
  EXPECT_EQ(categorize_kernel("void at::native::reduce_kernel<512, 1, ReduceOp<bool, func_wrapper_t<bool, and_kernel_cuda> > >(R)"),
            KernelCategory::reduction);
  EXPECT_EQ(categorize_kernel("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda>(int)"),
            KernelCategory::copy);
  EXPECT_EQ(categorize_kernel("sdpa::(anonymous namespace)::tril_kernel(bool const*, bool*, long, long)"), KernelCategory::elementwise);
  EXPECT_EQ(categorize_kernel("mystery"), KernelCategory::other);
}

// The kernels around our fused backward's main kernel count outside it, as cuDNN's do: none of
// their names may carry a fused-attention token (findings' fused-extra-kernels).
TEST(KernelNames, FusedBackwardHelpersAreNotTheFusedKernel) {
  EXPECT_EQ(
      categorize_kernel(
          "void sdpa::flash3::flash3_bwd_kernel<sdpa::flash3::Flash3BwdTraits<128, 2>, "
          "__nv_bfloat16, true>(CUtensorMap_st, CUtensorMap_st, float*, sdpa::AttentionShape)"),
      KernelCategory::fused_attention);
  for (const char* helper :
       {"void sdpa::(anonymous namespace)::backward_rows_kernel<__nv_bfloat16, 64>(__nv_bfloat16 "
        "const*, "
        "__nv_bfloat16 const*, float const*, sdpa::BackwardRows, long, int)",
        "void sdpa::flash::backward_convert_dq_warp_tiles_kernel<__nv_bfloat16, 64>(float const*, "
        "__nv_bfloat16*, long, int, int, float)",
        "void sdpa::(anonymous namespace)::backward_convert_dq_tiles_kernel<__nv_bfloat16, "
        "128>(float const*, "
        "__nv_bfloat16*, long, int, int, float)"})
    EXPECT_NE(categorize_kernel(helper), KernelCategory::fused_attention) << helper;
}

TEST(KernelNames, NamespacesDroppedAsBefore) {
  EXPECT_EQ(shorten_kernel_name("a::b::c<d::e, (anonymous namespace)::f>(x::y)"), "c<e, f>");
  EXPECT_EQ(shorten_kernel_name("::g<1::h>"), "::g<1::h>");  // no identifier before "::": kept
  EXPECT_EQ(shorten_kernel_name("a::::b"), "::b");
  EXPECT_EQ(shorten_kernel_name("x1ab::c"), "c");
  EXPECT_EQ(shorten_kernel_name("9ab::c"), "9c");
}

// A templated kernel's name of 27,000 characters crashed the regex that shortened it (one
// recursion per character); a megabyte must take a moment, not minutes.
TEST(KernelNames, LongNamesInLinearTime) {
  for (const std::size_t repeats : {std::size_t{3000}, std::size_t{120000}}) {
    std::string name = "void ";
    for (std::size_t i = 0; i < repeats; ++i) name += "ns::t<";
    name += "int";
    for (std::size_t i = 0; i < repeats; ++i) name += ">";
    name += "(float const*)";
    const auto start = std::chrono::steady_clock::now();
    const std::string shortened = shorten_kernel_name(name);
    EXPECT_EQ(categorize_kernel(name), KernelCategory::other);
    EXPECT_EQ(demangle(name), name);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string expected;
    while (expected.size() < 77) expected += "t<";
    EXPECT_EQ(shortened, expected.substr(0, 77) + "...");
    EXPECT_LT(seconds, 1.0) << name.size() << " characters";
  }
}

}  // namespace
}  // namespace sdpa
