// The occupancy calculator against values worked out by hand from each architecture's limits
// (and, for sm_90, against Nsight Compute on the H200: docs/DESIGN.md's occupancy table).
#include <gtest/gtest.h>

#include "profile/occupancy.h"

namespace sdpa {
namespace {

constexpr std::size_t kKiB = 1024;

OccupancyEstimate estimate(int major, int minor, LaunchResources launch, int sm_count = 132) {
  const std::optional<ArchLimits> arch = arch_limits(major, minor);
  EXPECT_TRUE(arch.has_value());
  const std::optional<OccupancyEstimate> e = estimate_occupancy(launch, *arch, sm_count);
  EXPECT_TRUE(e.has_value());
  return e.value_or(OccupancyEstimate{});
}

LaunchResources launch(int threads, int regs, std::size_t dynamic_shared = 0, int64_t grid = 100000) {
  LaunchResources l;
  l.threads_per_block = threads;
  l.registers_per_thread = regs;
  l.dynamic_shared = dynamic_shared;
  l.grid_blocks = grid;
  return l;
}

TEST(Occupancy, RegisterBoundKernelOnSm80) {
  // 255 registers round up to 256: 4 warps x 32 x 256 = 32768 of 65536 registers -> 2 blocks.
  const OccupancyEstimate e = estimate(8, 0, launch(128, 255), 108);
  EXPECT_EQ(e.blocks_per_sm, 2);
  EXPECT_DOUBLE_EQ(e.theoretical, 0.125);
  EXPECT_EQ(e.limiters, kLimitRegisters);
  EXPECT_EQ(limiter_text(e.limiters), "registers");
  EXPECT_DOUBLE_EQ(e.profiler_style, 0.125);
}

TEST(Occupancy, OptInSharedMemoryIsZeroForTheProfilerOnly) {
  // 100 KB + 1 KB reserved per block: one block fits the 164 KB carveout, none fits 48 KB.
  const OccupancyEstimate e = estimate(8, 0, launch(128, 32, 100 * kKiB), 108);
  EXPECT_EQ(e.blocks_per_sm, 1);
  EXPECT_DOUBLE_EQ(e.theoretical, 4.0 / 64);
  EXPECT_EQ(e.limiters, kLimitSharedMemory);
  EXPECT_EQ(limiter_text(e.limiters), "shared memory");
  EXPECT_DOUBLE_EQ(e.profiler_style, 0.0);
}

TEST(Occupancy, KnownValuesSm80) {
  // 64 registers x 128 threads = 8192 per block -> 8 blocks of 4 warps: 32 of 64 warps.
  const OccupancyEstimate e = estimate(8, 0, launch(128, 64), 108);
  EXPECT_EQ(e.blocks_per_sm, 8);
  EXPECT_DOUBLE_EQ(e.theoretical, 0.5);
  EXPECT_EQ(e.limiters, kLimitRegisters);
  // A full SM: 256 threads x 24 registers, 8 blocks by warps (2048 threads); registers allow 10.
  const OccupancyEstimate full = estimate(8, 0, launch(256, 24), 108);
  EXPECT_EQ(full.blocks_per_sm, 8);
  EXPECT_DOUBLE_EQ(full.theoretical, 1.0);
  EXPECT_EQ(full.limiters, kLimitWarps);
  EXPECT_EQ(full.block_limit_registers, 10);
}

TEST(Occupancy, KnownValuesSm86) {
  // 1536 threads per SM: 6 blocks of 256 threads, all 48 warps.
  const OccupancyEstimate e = estimate(8, 6, launch(256, 32), 84);
  EXPECT_EQ(e.blocks_per_sm, 6);
  EXPECT_DOUBLE_EQ(e.theoretical, 1.0);
  EXPECT_EQ(e.limiters, kLimitWarps);
  // 64 KB of shared memory: one block in the 100 KB carveout.
  const OccupancyEstimate smem = estimate(8, 6, launch(128, 32, 64 * kKiB), 84);
  EXPECT_EQ(smem.blocks_per_sm, 1);
  EXPECT_DOUBLE_EQ(smem.theoretical, 4.0 / 48);
  EXPECT_EQ(smem.limiters, kLimitSharedMemory);
}

TEST(Occupancy, KnownValuesSm89) {
  // 24 blocks per SM at most: 24 one-warp blocks are half of 48 warps.
  const OccupancyEstimate e = estimate(8, 9, launch(32, 16), 128);
  EXPECT_EQ(e.blocks_per_sm, 24);
  EXPECT_DOUBLE_EQ(e.theoretical, 0.5);
  EXPECT_NE(e.limiters & kLimitBlocks, 0u);
  // 1024 threads x 64 registers fill the register file, and 2 blocks would need 64 warps.
  const OccupancyEstimate big = estimate(8, 9, launch(1024, 64), 128);
  EXPECT_EQ(big.blocks_per_sm, 1);
  EXPECT_DOUBLE_EQ(big.theoretical, 32.0 / 48);
  EXPECT_EQ(big.limiters, kLimitRegisters | kLimitWarps);
}

TEST(Occupancy, PyTorchFlashOnSm90) {
  // docs/DESIGN.md: 128 threads, 255 registers, 48 KB dynamic -> 12.5%, 2 blocks by registers; the
  // 1024 CTAs of B8 H16 S1024 exceed 2 per SM, so the profiler prints 13% too.
  const OccupancyEstimate e = estimate(9, 0, launch(128, 255, 48 * kKiB, 1024));
  EXPECT_EQ(e.blocks_per_sm, 2);
  EXPECT_DOUBLE_EQ(e.theoretical, 0.125);
  EXPECT_EQ(e.limiters, kLimitRegisters);
  EXPECT_EQ(e.block_limit_shared_memory, 4);  // 228 KB / 49 KB with the largest carveout
  EXPECT_DOUBLE_EQ(e.profiler_style, 0.125);
  // With the 100 KB carveout the driver picks for it, shared memory ties at 2 blocks (as ncu says).
  LaunchResources carved = launch(128, 255, 48 * kKiB, 1024);
  carved.shared_config = 100 * kKiB;
  const OccupancyEstimate c = estimate(9, 0, carved);
  EXPECT_EQ(c.blocks_per_sm, 2);
  EXPECT_EQ(c.limiters, kLimitRegisters | kLimitSharedMemory);
}

TEST(Occupancy, CudnnOnSm90ShowsZeroInTheProfiler) {
  // docs/DESIGN.md: 384 threads, 168 registers, 134 KB dynamic, 132 persistent CTAs -> 18.75%.
  const OccupancyEstimate e = estimate(9, 0, launch(384, 168, 134 * kKiB, 132));
  EXPECT_EQ(e.blocks_per_sm, 1);
  EXPECT_DOUBLE_EQ(e.theoretical, 0.1875);
  EXPECT_EQ(e.limiters, kLimitRegisters | kLimitSharedMemory);
  EXPECT_DOUBLE_EQ(e.profiler_style, 0.0);
}

TEST(Occupancy, MatchesNsightComputeOnTheH200) {
  // ncu --section Occupancy on cuBLAS's nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT (naive's PV GEMM):
  // 168 registers, 188.64 kB dynamic shared memory, 196 KiB carveout -> block limits registers 1,
  // shared memory 1, warps 5, SM 32; theoretical occupancy 18.75%.
  LaunchResources nvjet = launch(384, 168, 188640, 132);
  nvjet.shared_config = 196 * kKiB;
  const OccupancyEstimate e = estimate(9, 0, nvjet);
  EXPECT_EQ(e.blocks_per_sm, 1);
  EXPECT_DOUBLE_EQ(e.theoretical, 0.1875);
  EXPECT_EQ(e.block_limit_registers, 1);
  EXPECT_EQ(e.block_limit_shared_memory, 1);
  EXPECT_EQ(e.block_limit_warps, 5);
  EXPECT_EQ(e.block_limit_blocks, 32);
  EXPECT_EQ(e.limiters, kLimitRegisters | kLimitSharedMemory);
  EXPECT_DOUBLE_EQ(e.profiler_style, 0.0);  // what torch.profiler printed for it: 0%
}

TEST(Occupancy, ProfilerStyleCapsBySmallGrids) {
  // 66 blocks on 132 SMs: half a block per SM, whatever the SM could hold.
  const OccupancyEstimate e = estimate(9, 0, launch(256, 32, 0, 66));
  EXPECT_DOUBLE_EQ(e.theoretical, 1.0);
  EXPECT_DOUBLE_EQ(e.profiler_style, 0.5 * 256 / 2048);
}

TEST(Occupancy, UnknownInputs) {
  EXPECT_FALSE(arch_limits(7, 5).has_value());
  EXPECT_FALSE(estimate_occupancy(launch(0, 32), *arch_limits(9, 0), 132).has_value());
  EXPECT_EQ(limiter_text(0), "");
}

}  // namespace
}  // namespace sdpa
