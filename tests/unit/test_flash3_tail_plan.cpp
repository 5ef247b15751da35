// How a persistent flash3 launch splits the tiles of its last round (kernels/flash3_tail_plan.h):
// host arithmetic, checked without a GPU.
#include <gtest/gtest.h>

#include <vector>

#include "flash3_tail_plan.h"

namespace sdpa::flash3 {
namespace {

AttentionShape shape(int64_t batch, int64_t heads, int64_t seq, bool causal) {
  return {batch, heads, heads, seq, seq, 128, causal, 0.088f};
}

TEST(Flash3TailPlan, TheH200sLastRoundOfFourTilesBecomesEightUnitsEach) {
  // B8 H16 S4096 D128: 4096 tiles of 128 rows on 132 SMs, 31 whole rounds and 4 tiles.
  const TailSplitPlan plan = plan_tail_split(shape(8, 16, 4096, false), 128, 128, 132);
  EXPECT_EQ(plan.splits, 8);  // 32 key blocks of at least kMinSplitBlocks each
  EXPECT_EQ(plan.first_unit, 4092);
  EXPECT_EQ(plan.units, 4092 + 4 * 8);
  EXPECT_EQ(plan.grid, 132);
}

TEST(Flash3TailPlan, NothingSplitsWhenTheRoundsAreWholeCausalOrTheKeysShort) {
  EXPECT_EQ(plan_tail_split(shape(33, 4, 4096, false), 128, 128, 132).splits, 1);  // 4224 tiles
  EXPECT_EQ(plan_tail_split(shape(8, 16, 4096, true), 128, 128, 132).splits, 1);
  EXPECT_EQ(plan_tail_split(shape(1, 4, 512, false), 128, 128, 132).splits, 1);  // 4 blocks
  EXPECT_EQ(tail_split_bytes(shape(8, 16, 4096, true), 128, 128, 132), 0u);
}

TEST(Flash3TailPlan, FewTilesSpreadOverTheGridWithinTheBounds) {
  // 32 tiles of 16 key blocks on 132 SMs: 4 ways (132 / 32, and 16 blocks / kMinSplitBlocks).
  const TailSplitPlan few = plan_tail_split(shape(1, 2, 2048, false), 128, 128, 132);
  EXPECT_EQ(few.splits, 4);
  EXPECT_EQ(few.first_unit, 0);
  EXPECT_EQ(few.units, 128);
  EXPECT_EQ(few.grid, 128);
  // One tile of one key block: nothing to split; one of 1024 blocks: kMaxSplits ways.
  EXPECT_EQ(plan_tail_split(shape(1, 1, 128, false), 128, 128, 132).splits, 1);
  EXPECT_EQ(tail_splits(1, 132, 1024, false), kMaxSplits);
  // The split units of a round never outnumber the grid (a part slot each).
  for (int64_t tiles = 1; tiles < 600; ++tiles) {
    const int splits = tail_splits(tiles, 132, 64, false);
    const int64_t last_round = tiles - (tiles - 1) / 132 * 132;
    EXPECT_LE(last_round * splits, 132) << tiles;
    EXPECT_GE(splits, 1) << tiles;
  }
}

TEST(Flash3TailPlan, TheWorkspaceHoldsAPartPerCtaAndACounterPerWarp) {
  const TailSplitLayout layout = tail_split_layout(132, 128, 128);
  EXPECT_EQ(layout.partial_bytes, 132u * 128 * 128 * 4);
  EXPECT_EQ(layout.stats_bytes, 132u * 128 * 32);  // a float4 per thread, 128 threads per 64 rows
  EXPECT_EQ(layout.arrival_bytes, 132u * 8 * 4);
  EXPECT_EQ(tail_split_bytes(shape(8, 16, 4096, false), 128, 128, 132), layout.total());
  const TailSplitPlan plan = plan_tail_split(shape(8, 16, 4096, false), 128, 128, 132);
  std::vector<unsigned char> buffer(layout.total());
  unsigned char* const workspace = buffer.data();
  const TailSplit split = tail_split_in(workspace, nullptr, plan, 132, 128, 128);
  EXPECT_EQ(reinterpret_cast<unsigned char*>(split.stats), workspace + layout.partial_bytes);
  EXPECT_EQ(reinterpret_cast<unsigned char*>(split.arrivals),
            workspace + layout.partial_bytes + layout.stats_bytes);
  EXPECT_EQ(split.first_unit, 4092);
  EXPECT_EQ(tail_split_in(workspace, nullptr, plan_tail_split(shape(8, 16, 4096, true), 128, 128, 132),
                          132, 128, 128)
                .splits,
            1);
}

}  // namespace
}  // namespace sdpa::flash3
