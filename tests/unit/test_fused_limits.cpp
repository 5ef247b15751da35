// The fused kernels' limits are stated once: the backend's unsupported() and the launcher read
// the same ones. Checked without a GPU: the launcher refuses before any CUDA call.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "backends/efficient.h"
#include "backends/flash.h"
#include "backends/flash3.h"
#include "efficient_fwd.h"
#include "flash_bwd.h"
#include "flash_fwd.h"
#include "hopper_device.h"
#ifdef SDPA_HAVE_FLASH3
#include "flash3_fwd.h"
#endif

namespace sdpa {
namespace {

Problem problem(int64_t head_dim) {
  Problem p;
  p.batch = 2;
  p.heads = 4;
  p.kv_heads = 2;
  p.seq_q = 1000;
  p.seq_kv = 1000;
  p.head_dim = head_dim;
  return p;
}

cudaError_t launch(const FusedForwardKernel& kernel, const Problem& p) {
  const AttentionShape shape{p.batch,  p.heads,    p.kv_heads, p.seq_q,
                             p.seq_kv, p.head_dim, p.causal,   0.125f};
  return kernel.launch({DType::bf16, shape, nullptr, nullptr, nullptr, nullptr, nullptr});
}

TEST(FusedLimits, ListShowsTheInstantiatedHeadDims) {
  for (const BackendEntry* e : {&flash_backend_entry(), &efficient_backend_entry()}) {
    EXPECT_EQ(e->head_dims, "64, 128") << e->name;
    EXPECT_EQ(e->archs, "sm_80+") << e->name;
  }
}

TEST(FusedLimits, UnbuiltHeadDimIsSkippedWithTheReasonAndRefusedByTheLauncher) {
  EXPECT_EQ(flash_backend_entry().unsupported(problem(96), test::hopper_device()),
            "head dim 96 not built: the kernel's swizzled tiles need a multiple of 64 and only 64 "
            "and 128 are instantiated");
  EXPECT_EQ(launch(kFlashForward, problem(96)), cudaErrorInvalidValue);
  EXPECT_EQ(launch(kEfficientForward, problem(96)), cudaErrorInvalidValue);
}

// Whether a fused backend reads pages is its kernel's limit, stated once: the registry skips a
// paged problem for it, and its launcher refuses pages it cannot read.
TEST(FusedLimits, PagedKvIsTheKernelsLimit) {
  std::vector<std::pair<const BackendEntry*, const FusedForwardKernel*>> fused{
      {&flash_backend_entry(), &kFlashForward}, {&efficient_backend_entry(), &kEfficientForward}};
#ifdef SDPA_HAVE_FLASH3
  fused.emplace_back(&flash3_backend_entry(), &kFlash3Forward);
#endif
  const Problem p = problem(64);
  const AttentionShape shape{p.batch, p.heads, p.kv_heads, p.seq_q, p.seq_kv, p.head_dim, p.causal, 0.125f};
  const PagedKv pages{};
  for (const auto& [entry, kernel] : fused) {
    SCOPED_TRACE(std::string(entry->name));
    EXPECT_EQ(entry->reads_paged_kv, kernel->limits.reads_paged_kv);
    if (kernel->limits.reads_paged_kv) continue;
    EXPECT_EQ(kernel->launch({DType::bf16, shape, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, &pages}),
              cudaErrorInvalidValue);
  }
}

TEST(FusedLimits, DeviceLimitsComeFromTheKernel) {
  DeviceInfo a100 = test::hopper_device();
  a100.cc_major = 8;
  EXPECT_EQ(efficient_backend_entry().unsupported(problem(64), a100), std::nullopt);
  DeviceInfo turing = test::hopper_device();
  turing.cc_major = 7;
  turing.cc_minor = 5;
  EXPECT_EQ(flash_backend_entry().unsupported(problem(64), turing),
            "needs sm_80 or newer (mma.sync m16n8k16 with bf16, cp.async)");
  DeviceInfo small = test::hopper_device();
  small.shared_per_block_optin = 48 * 1024;
  const auto why = flash_backend_entry().unsupported(problem(128), small);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("KB of shared memory per block, the device has 48"), std::string::npos)
      << *why;
}

// A backward whose main kernel asks a block for more shared memory than the forward's is checked
// against the device too, and skipped with the reason before any launch (flash's D128 backward
// on a GPU that gives a block only what the forward asks for, as sm_86's 99 KB once did).
TEST(FusedLimits, TheBackwardsSharedMemoryIsCheckedToo) {
  const int forward_smem = kFlashForward.limits.find(128)->smem_bytes;
  ASSERT_GT(flash_backward_smem_bytes(128), forward_smem);
  DeviceInfo small = test::hopper_device();
  small.shared_per_block_optin = static_cast<std::size_t>(forward_smem);
  Problem p = problem(128);
  EXPECT_EQ(flash_backend_entry().unsupported(p, small), std::nullopt);
  p.pass = AttentionPass::backward;
  const auto why = flash_backend_entry().unsupported(p, small);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("bwd: the backward needs"), std::string::npos) << *why;
  EXPECT_EQ(flash_backend_entry().unsupported(p, test::hopper_device()), std::nullopt);
  EXPECT_EQ(flash_backward_smem_bytes(96), 0);  // not built
}

TEST(FusedLimits, GridLimitIsSharedByBackendAndLauncher) {
  Problem p = problem(64);
  p.heads = p.kv_heads = 70000;
  EXPECT_EQ(flash_backend_entry().unsupported(p, test::hopper_device()),
            "more than 65535 heads or batches (grid y / z)");
  EXPECT_EQ(launch(kFlashForward, p), cudaErrorInvalidValue);
  EXPECT_EQ(launch(kEfficientForward, p), cudaErrorInvalidValue);
}

TEST(FusedLimits, SupportedShapePasses) {
  for (const int64_t d : {64, 128})
    for (const FusedForwardKernel* k : {&kFlashForward, &kEfficientForward}) {
      const AttentionShape s{2, 4, 2, 1000, 1000, d, true, 0.125f};
      EXPECT_EQ(broken_limit(k->limits, s), FusedLimit::none);
      EXPECT_GT(k->limits.find(d)->smem_bytes, 0);
    }
}

// flash3 is sm_90a code: it runs on sm_90 alone, and an sm_80-only build lists it as not built.
TEST(FusedLimits, Flash3RunsOnSm90Only) {
  const BackendEntry& e = flash3_backend_entry();
  EXPECT_EQ(e.archs, "sm_90a");
  EXPECT_EQ(e.head_dims, "64, 128");
#ifdef SDPA_HAVE_FLASH3
  ASSERT_TRUE(e.built());
  EXPECT_EQ(e.unsupported(problem(128), test::hopper_device()), std::nullopt);
  DeviceInfo a100 = test::hopper_device();
  a100.cc_major = 8;
  EXPECT_EQ(
      e.unsupported(problem(128), a100),
      "needs sm_90 exactly, the device is sm_80 (wgmma, setmaxnreg and TMA, built for sm_90a, "
      "code that runs on sm_90 alone)");
  DeviceInfo blackwell = test::hopper_device();
  blackwell.cc_major = 10;
  EXPECT_NE(e.unsupported(problem(64), blackwell), std::nullopt);
  EXPECT_EQ(
      e.unsupported(problem(96), test::hopper_device()),
      "head dim 96 not built: its wgmma shapes and 128-byte swizzled tiles are written for 64 "
      "and 128 and only 64 and 128 are instantiated");
  EXPECT_EQ(launch(kFlash3Forward, problem(96)), cudaErrorInvalidValue);
  EXPECT_TRUE(e.has_backward());
  ASSERT_NE(kFlash3Forward.launch_backward, nullptr);
  // Without the forward's row statistics the backward refuses before it touches the device.
  FusedBackward b{};
  b.shape = AttentionShape{1, 1, 1, 64, 64, 64, false, 0.125f};
  EXPECT_EQ(kFlash3Forward.launch_backward(b), cudaErrorInvalidValue);
#else
  EXPECT_FALSE(e.built());
  EXPECT_NE(e.not_built_reason.find("90a"), std::string_view::npos);
#endif
}

}  // namespace
}  // namespace sdpa
