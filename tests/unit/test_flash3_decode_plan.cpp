// flash3's decode kernel as host code sees it (kernels/flash3_decode_plan.h): the dispatch rule,
// the split heuristic, the tile rows, the workspace, the K/V addresses against the paged layout's
// own address function, and what the backend answers for paged problems. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "backends/flash3.h"
#include "flash3_decode_plan.h"
#include "hopper_device.h"
#ifdef SDPA_HAVE_FLASH3
#include "flash3_fwd.h"
#endif

namespace sdpa::flash3 {
namespace {

AttentionShape decode(int64_t batch, int64_t heads, int64_t kv_heads, int64_t seq_q, int64_t seq_kv,
                      bool causal = false) {
  return {batch, heads, kv_heads, seq_q, seq_kv, 128, causal, 0.088f};
}

constexpr int kH200Sms = 132;

TEST(Flash3DecodePlan, QueriesUpToSixteenGoToTheDecodeKernel) {
  EXPECT_TRUE(uses_decode_kernel(decode(1, 32, 8, 1, 32768)));
  EXPECT_TRUE(uses_decode_kernel(decode(1, 32, 8, 16, 32768)));
  EXPECT_TRUE(uses_decode_kernel(decode(1, 32, 8, 16, 16, true)));
  EXPECT_FALSE(uses_decode_kernel(decode(1, 32, 8, 17, 32768)));
  EXPECT_FALSE(uses_decode_kernel(decode(8, 16, 16, 4096, 4096)));
}

TEST(Flash3DecodePlan, TheIssuesShapesSplitToFillTheSms) {
  // B16 H32/8 Skv32768 D128: 128 units, one CTA on each of 128 of the 132 SMs: no split.
  const DecodePlan b16 = plan_decode(decode(16, 32, 8, 1, 32768), kH200Sms);
  EXPECT_EQ(b16.rows, 16);
  EXPECT_EQ(b16.row_blocks, 1);
  EXPECT_EQ(b16.units, 128);
  EXPECT_EQ(b16.n_blocks, 512);
  EXPECT_EQ(b16.splits, 1);
  EXPECT_EQ(b16.blocks_per_split, 512);
  // B64 Skv131072: 512 units are 1.94 waves of 264 slots already.
  EXPECT_EQ(plan_decode(decode(64, 32, 8, 1, 131072), kH200Sms).splits, 1);
  // B1 Skv131072: 8 units; 16 splits put one CTA on 128 SMs, the fewest within 5% of the best.
  const DecodePlan b1 = plan_decode(decode(1, 32, 8, 1, 131072), kH200Sms);
  EXPECT_EQ(b1.splits, 16);
  EXPECT_EQ(b1.blocks_per_split, 128);
  // B1 Skv4096: 64 blocks allow at most 16 splits of 4.
  const DecodePlan short_keys = plan_decode(decode(1, 32, 8, 1, 4096), kH200Sms);
  EXPECT_LE(short_keys.splits, 16);
  EXPECT_GE(short_keys.blocks_per_split, kDecodeMinSplitBlocks);
  EXPECT_GT(short_keys.splits, 8);
}

TEST(Flash3DecodePlan, HeadDim64HoldsFourOneTileCtasAnSmAndThreeOfTwoTiles) {
  EXPECT_EQ(decode_slots(64, 16).wide, 4);
  EXPECT_EQ(decode_slots(64, 16).deep, 3);
  EXPECT_EQ(decode_slots(64, 32).wide, 3);
  EXPECT_EQ(decode_slots(64, 16).fill, 2);
  EXPECT_EQ(decode_slots(128, 16).wide, 2);
  EXPECT_EQ(decode_slots(128, 32).deep, 2);
  EXPECT_EQ(decode_slots(128, 16).fill, 1);
  // Stages: as many as the SM's shared memory holds for that many CTAs, 4 at most.
  EXPECT_EQ((DecodeTraits<64, 4>::kStages), 3);
  EXPECT_EQ((DecodeTraits<64, 3>::kStages), 4);
  EXPECT_EQ((DecodeTraits<128, 2>::kStages), 3);
  // Split parts the combine holds in the drained stages: D64's three stages hold 64.
  EXPECT_EQ((DecodeTraits<64, 4>::kMaxSplits), 64);
  EXPECT_EQ(decode_slots(64, 16).wide_max_splits, 64);
  EXPECT_EQ((DecodeTraits<64, 3>::kMaxSplits), kDecodeMaxSplits);
  EXPECT_EQ((DecodeTraits<128, 2>::kMaxSplits), kDecodeMaxSplits);
}

// One K/V head at B1 (multi-query attention) splits 128 ways, one CTA on 128 SMs, on the deep
// ring, whose combine holds every part; no plan hands a kernel more parts than its combine holds.
TEST(Flash3DecodePlan, EveryPlanFitsItsKernelsCombine) {
  for (const int64_t head_dim : {64, 128}) {
    AttentionShape mqa = decode(1, 8, 1, 1, 131072);
    mqa.head_dim = head_dim;
    const DecodePlan p = plan_decode(mqa, kH200Sms);
    EXPECT_EQ(p.splits, kDecodeMaxSplits);
    EXPECT_EQ(p.ctas_per_sm, decode_slots(head_dim, 16).deep);
  }
  for (const int64_t head_dim : {64, 128})
    for (const int64_t batch : {1, 2, 3, 16, 64})
      for (const int64_t kv_heads : {1, 2, 8})
        for (const int64_t heads : {kv_heads, 4 * kv_heads, 8 * kv_heads})
          for (const int64_t seq_q : {1, 4, 16})
            for (const int64_t seq_kv : {1000, 4097, 32768, 131072})
              for (const int64_t page_size : {0, 16, 64}) {
                AttentionShape s = decode(batch, heads, kv_heads, seq_q, seq_kv);
                s.head_dim = head_dim;
                const DecodePlan p = plan_decode(s, kH200Sms, page_size);
                const DecodeSlots slots = decode_slots(head_dim, p.rows);
                const int holds =
                    p.ctas_per_sm == slots.wide ? slots.wide_max_splits : kDecodeMaxSplits;
                ASSERT_LE(p.splits, holds) << batch << " " << heads << "/" << kv_heads << " "
                                           << seq_q << " " << seq_kv << " D" << head_dim;
              }
}

// The deeper ring where no SM gets a second CTA, the wider residency where they do.
TEST(Flash3DecodePlan, OneCtaAnSmTakesTheDeeperRing) {
  AttentionShape s = decode(1, 32, 8, 1, 32768);
  s.head_dim = 64;
  const DecodePlan one_each = plan_decode(s, kH200Sms);
  ASSERT_EQ(one_each.units * one_each.splits, 128);
  EXPECT_EQ(one_each.ctas_per_sm, 3);
  s.seq_kv = 131072;
  const DecodePlan two_each = plan_decode(s, kH200Sms);
  ASSERT_GT(two_each.units * two_each.splits, kH200Sms);
  EXPECT_EQ(two_each.ctas_per_sm, 4);
  s.batch = 64;
  EXPECT_EQ(plan_decode(s, kH200Sms).ctas_per_sm, 4);
  EXPECT_EQ(plan_decode(decode(1, 32, 8, 1, 32768), kH200Sms).ctas_per_sm, 2);
}

// K and V stream by TMA from a contiguous cache and from pages of whole blocks, except at D64
// where each SM holds one CTA; smaller pages by cp.async.
TEST(Flash3DecodePlan, TmaReadsWholeBlocksButOneD64CtaAnSm) {
  AttentionShape s = decode(64, 32, 8, 1, 32768);
  for (const int64_t head_dim : {64, 128}) {
    s.head_dim = head_dim;
    EXPECT_TRUE(plan_decode(s, kH200Sms).tma_kv);
    for (const int64_t page_size : {64, 128, 192})
      EXPECT_TRUE(plan_decode(s, kH200Sms, page_size).tma_kv) << page_size;
    for (const int64_t page_size : {1, 16, 32})
      EXPECT_FALSE(plan_decode(s, kH200Sms, page_size).tma_kv) << page_size;
  }
  s.head_dim = 64;
  s.batch = 1;
  ASSERT_LE(plan_decode(s, kH200Sms).units * plan_decode(s, kH200Sms).splits, kH200Sms);
  EXPECT_FALSE(plan_decode(s, kH200Sms).tma_kv);
  EXPECT_FALSE(plan_decode(s, kH200Sms, 64).tma_kv);
  s.head_dim = 128;
  EXPECT_TRUE(plan_decode(s, kH200Sms).tma_kv);
}

TEST(Flash3DecodePlan, HeadDim64FillsAnSmWithTwoCtasAndRunsOneResidentWave) {
  AttentionShape b16 = decode(16, 32, 8, 1, 32768);
  b16.head_dim = 64;
  EXPECT_EQ(plan_decode(b16, kH200Sms).splits, 2);  // 256 CTAs: two on 128 SMs
  AttentionShape b64 = decode(64, 32, 8, 1, 32768);
  b64.head_dim = 64;
  EXPECT_EQ(plan_decode(b64, kH200Sms).splits, 1);             // 512 CTAs: one wave of 528 slots
  AttentionShape b64_two_tiles = decode(64, 64, 8, 4, 32768);  // 32 rows: 3 CTAs an SM
  b64_two_tiles.head_dim = 64;
  EXPECT_EQ(plan_decode(b64_two_tiles, kH200Sms).splits, 3);  // 1536 CTAs: 3.9 waves of 396
}

// A split that puts a second CTA on an SM must be long: B1 H32/8 D64 Skv32768 (512 blocks) stops
// at one CTA an SM, Skv131072 (2048 blocks) stacks two. Read a row at a time (pages of 16), half
// as long will do at D64: 31 splits of 17 blocks; D128 keeps 16 of 32.
TEST(Flash3DecodePlan, AShortSplitDoesNotStackASecondCtaOnAnSm) {
  AttentionShape b1 = decode(1, 32, 8, 1, 32768);
  b1.head_dim = 64;
  EXPECT_EQ(plan_decode(b1, kH200Sms).splits, 16);
  const DecodePlan paged = plan_decode(b1, kH200Sms, 16);
  EXPECT_EQ(paged.splits, 31);
  EXPECT_GE(paged.blocks_per_split, decode_row_lookup_stacking(64).min_split_blocks);
  EXPECT_LT(paged.blocks_per_split, kDecodeStacking.min_split_blocks);
  EXPECT_EQ(plan_decode(decode(1, 32, 8, 1, 32768), kH200Sms, 16).splits, 16);  // D128
  b1.seq_kv = 131072;
  const DecodePlan long_keys = plan_decode(b1, kH200Sms);
  EXPECT_GT(long_keys.splits, 16);
  EXPECT_GE(long_keys.blocks_per_split, kDecodeStacking.min_split_blocks);
}

// Read a row at a time, D64 counts two CTAs an SM as its fill, not the four it holds: B1 H32/8
// Skv131072 (2048 blocks, 8 units) splits 32 ways, two CTAs on 128 SMs, not 61.
TEST(Flash3DecodePlan, PagesReadARowAtATimeCountTwoCtasAsAnSmsFill) {
  AttentionShape s = decode(1, 32, 8, 1, 131072);
  s.head_dim = 64;
  EXPECT_EQ(plan_decode(s, kH200Sms, 16).splits, 32);
}

// Splitting costs the combine: contiguous B16 H32/8 D64 keeps a sequence under 128 blocks whole,
// one deep CTA on 128 SMs, and splits one of 128 in two, two wide CTAs an SM; in pages smaller
// than a block, it splits.
TEST(Flash3DecodePlan, AShortSequenceStaysWholeWhereItsCtasRunOneAnSm) {
  AttentionShape b16 = decode(16, 32, 8, 1, 4096);
  b16.head_dim = 64;
  const DecodePlan short_keys = plan_decode(b16, kH200Sms);
  EXPECT_EQ(short_keys.splits, 1);
  EXPECT_EQ(short_keys.ctas_per_sm, decode_slots(64, 16).deep);
  EXPECT_EQ(decode_workspace_bytes(short_keys, 64), 0u);
  b16.seq_kv = kDecodeStacking.min_blocks * kDecodeBlockN;
  EXPECT_EQ(plan_decode(b16, kH200Sms).splits, 2);
  b16.seq_kv -= kDecodeBlockN;
  EXPECT_EQ(plan_decode(b16, kH200Sms).splits, 1);
  EXPECT_EQ(plan_decode(decode(16, 32, 8, 1, 4096), kH200Sms, 16).splits, 2);  // pages of 16
}

// B16 H32/8 D128: one CTA an SM contiguous and in pages of whole blocks; in smaller pages, two an
// SM (256 CTAs) for the rows' lookups' latency.
TEST(Flash3DecodePlan, PagesReadARowAtATimeRunTwoCtasAnSm) {
  const AttentionShape s = decode(16, 32, 8, 1, 32768);
  EXPECT_EQ(plan_decode(s, kH200Sms).splits, 1);
  for (const int64_t page_size : {64, 128})
    EXPECT_EQ(plan_decode(s, kH200Sms, page_size).splits, 1) << page_size;
  for (const int64_t page_size : {8, 16, 32})
    EXPECT_EQ(plan_decode(s, kH200Sms, page_size).splits, 2) << page_size;
  EXPECT_FALSE(decode_row_lookups(0));
  EXPECT_FALSE(decode_row_lookups(192));
  EXPECT_TRUE(decode_row_lookups(1));
}

TEST(Flash3DecodePlan, ShortOrCausalKeysDoNotSplit) {
  EXPECT_EQ(plan_decode(decode(1, 4, 1, 1, 255), kH200Sms).splits, 1);  // 4 blocks
  const DecodePlan causal = plan_decode(decode(1, 32, 8, 4, 131072, true), kH200Sms);
  EXPECT_EQ(causal.visible_keys, 4);  // top-left: query i sees keys 0..i
  EXPECT_EQ(causal.n_blocks, 1);
  EXPECT_EQ(causal.splits, 1);
  EXPECT_EQ(decode_workspace_bytes(causal, 128), 0u);
  EXPECT_EQ(plan_decode(decode(1, 4, 4, 16, 3, true), kH200Sms).visible_keys, 3);
}

TEST(Flash3DecodePlan, GroupedHeadsTimesQueriesAreTheTileRows) {
  EXPECT_EQ(plan_decode(decode(2, 32, 8, 4, 1000), kH200Sms).rows, 16);    // 4 x 4
  const DecodePlan g8 = plan_decode(decode(2, 64, 8, 4, 1000), kH200Sms);  // 8 x 4
  EXPECT_EQ(g8.rows, 32);
  EXPECT_EQ(g8.row_blocks, 1);
  const DecodePlan g8s16 = plan_decode(decode(2, 64, 8, 16, 1000), kH200Sms);  // 128 rows
  EXPECT_EQ(g8s16.rows, 32);
  EXPECT_EQ(g8s16.row_blocks, 4);
  EXPECT_EQ(g8s16.units, 2 * 8 * 4);
  const DecodePlan mha = plan_decode(decode(2, 8, 8, 1, 1000), kH200Sms);
  EXPECT_EQ(mha.rows, 16);
  EXPECT_EQ(mha.row_blocks, 1);
}

// Every split holds at least one block and the splits cover the blocks, whatever the shape.
TEST(Flash3DecodePlan, SplitsAreNeverEmptyAndCoverEveryBlock) {
  for (const int sms : {1, 78, 132})
    for (const int ctas : {1, 2, 3})
      for (int64_t units = 1; units <= 300; units += 13)
        for (int64_t blocks = 1; blocks <= 2100; blocks += 7) {
          const int fill = std::min(ctas, 2);
          const int splits = decode_splits(units, blocks, sms, ctas, fill, kDecodeStacking);
          ASSERT_GE(splits, 1);
          ASSERT_LE(splits, kDecodeMaxSplits);
          const int64_t each = (blocks + splits - 1) / splits;
          ASSERT_GT(blocks, (splits - 1) * each) << units << " units, " << blocks << " blocks";
          if (splits > 1) {
            ASSERT_GE(each, kDecodeMinSplitBlocks);
          }
          if (decode_balance(units, sms, ctas, fill) >= 0.95) {
            ASSERT_EQ(splits, 1);  // the SMs are evenly loaded unsplit already
          }
        }
}

TEST(Flash3DecodePlan, TheWorkspaceHoldsEverySplitsPart) {
  const DecodePlan p = plan_decode(decode(1, 32, 8, 1, 131072), kH200Sms);
  ASSERT_EQ(p.splits, 16);
  const std::size_t parts = 8 * 16 * kDecodeMaxRows;  // units x splits x rows
  EXPECT_EQ(decode_workspace_bytes(p, 128), 256 + parts * 4 * (1 + 128));  // 8 counters in 256 B
  std::vector<unsigned char> memory(decode_workspace_bytes(p, 128));
  const DecodeWorkspace w = decode_workspace(memory.data(), p);
  EXPECT_EQ(reinterpret_cast<unsigned char*>(w.arrivals), memory.data());
  EXPECT_EQ(reinterpret_cast<unsigned char*>(w.lse), memory.data() + 256);
  EXPECT_EQ(reinterpret_cast<unsigned char*>(w.partial_o + parts * 128),
            memory.data() + memory.size());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w.partial_o) % 16, 0u);
}

// The kernel's addresses are paged_kv_offset's (and the contiguous layout's), block by block.
TEST(Flash3DecodePlan, KvAddressesAreThePagedLayouts) {
  const AttentionShape s{3, 8, 2, 1, 1000, 64, false, 0.125f};
  const int64_t pages_at_most = s.seq_kv / 16 + 1;
  for (const int64_t page_size : {16, 32, 64, 128, 192}) {
    SCOPED_TRACE(page_size);
    const PagedKvLayout l = paged_kv_layout(s, page_size);
    ASSERT_LE(l.pages_per_sequence, pages_at_most);
    std::vector<int32_t> table(static_cast<std::size_t>(l.pool_pages));
    std::iota(table.rbegin(), table.rend(), 0);  // any permutation: reversed
    DecodeKvAddress a;
    ASSERT_TRUE(paged_kv_address({l, nullptr, nullptr, table.data()}, a));
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t h = 0; h < s.kv_heads; ++h)
        for (int key = 0; key < s.seq_kv; ++key) {
          const int n0 = key / kDecodeBlockN * kDecodeBlockN;
          const int64_t at = a.small_pages() ? a.small_page_row(a.small_page(b, key), h, key)
                                             : a.block_offset(b, h, n0) + (key - n0) * a.row_stride;
          ASSERT_EQ(at, paged_kv_offset(l, table.data(), b, h, key))
              << "b " << b << " h " << h << " key " << key;
          if (!a.small_pages()) {  // the cp.async path's form: the block's page looked up ahead
            ASSERT_EQ(a.block_row(a.block_page(b, n0), h, n0), a.block_offset(b, h, n0)) << key;
          }
        }
  }
  const DecodeKvAddress c = contiguous_kv_address(s);
  EXPECT_FALSE(c.small_pages());
  EXPECT_EQ(c.block_offset(2, 1, 960) + 39 * c.row_stride,
            ((2 * s.kv_heads + 1) * s.seq_kv + 999) * s.head_dim);
}

TEST(Flash3DecodePlan, PagesOfOtherSizesAreRefused) {
  const AttentionShape s{1, 4, 4, 1, 1000, 64, false, 0.125f};
  DecodeKvAddress a;
  for (const int64_t page_size : {3, 24, 48, 96, 100}) {
    const PagedKvLayout l = paged_kv_layout(s, page_size);
    EXPECT_FALSE(paged_kv_address({l, nullptr, nullptr, nullptr}, a)) << page_size;
  }
}

#ifdef SDPA_HAVE_FLASH3
Problem paged_problem(int64_t seq_q, int64_t page_size) {
  Problem p;
  p.batch = 2;
  p.heads = 32;
  p.kv_heads = 8;
  p.seq_q = seq_q;
  p.seq_kv = 1000;
  p.head_dim = 128;
  p.page_size = page_size;
  return p;
}

cudaError_t launch(const FusedForwardKernel& kernel, const Problem& p, const PagedKv* pages) {
  const AttentionShape shape{p.batch,  p.heads,    p.kv_heads, p.seq_q,
                             p.seq_kv, p.head_dim, p.causal,   0.125f};
  return kernel.launch(
      {DType::bf16, shape, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, pages});
}

// The backend reads pages in its decode kernel alone: a paged prefill shape, or pages of a size
// the decode kernel cannot read, are skipped with the reason and refused by the launcher.
TEST(Flash3DecodePlan, PagedProblemsTheDecodeKernelCannotReadAreSkippedWithTheReason) {
  const BackendEntry& e = flash3_backend_entry();
  EXPECT_TRUE(e.reads_paged_kv);
  EXPECT_EQ(e.unsupported(paged_problem(1, 16), test::hopper_device()), std::nullopt);
  EXPECT_EQ(e.unsupported(paged_problem(16, 192), test::hopper_device()), std::nullopt);
  EXPECT_EQ(e.unsupported(paged_problem(17, 16), test::hopper_device()),
            "reads a paged K/V cache only in its decode kernel, for at most 16 queries; Sq is 17");
  EXPECT_EQ(e.unsupported(paged_problem(1, 48), test::hopper_device()),
            "reads pages whose size divides its 64-key block or is a multiple of it; the page size "
            "is 48");
  const Problem prefill = paged_problem(17, 16);
  const PagedKv pages{paged_kv_layout({2, 32, 8, 17, 1000, 128, false, 0.125f}, 16)};
  EXPECT_EQ(launch(kFlash3Forward, prefill, &pages), cudaErrorInvalidValue);
  EXPECT_EQ(launch(kFlash3Decode, prefill, nullptr), cudaErrorInvalidValue);
  const PagedKv odd{paged_kv_layout({2, 32, 8, 1, 1000, 128, false, 0.125f}, 48)};
  EXPECT_EQ(launch(kFlash3Forward, paged_problem(1, 48), &odd), cudaErrorInvalidValue);
  for (const Flash3Schedule schedule : {Flash3Schedule::serial, Flash3Schedule::pingpong}) {
    const PagedKv decode_pages{paged_kv_layout({2, 32, 8, 1, 1000, 128, false, 0.125f}, 16)};
    EXPECT_EQ(launch(flash3_forward(schedule, true), paged_problem(1, 16), &decode_pages),
              cudaErrorInvalidValue);
  }
}

// flash3:all on a decode shape runs the decode kernel, and the prefill schedules beside it where
// K and V are contiguous; a prefill shape runs the schedules alone.
TEST(Flash3DecodePlan, DecodeShapesHaveTheDecodeVariant) {
  const BackendEntry& e = flash3_backend_entry();
  const std::vector<std::string> contiguous = e.variants(paged_problem(1, 0));
  ASSERT_EQ(contiguous.size(), 7u);
  EXPECT_EQ(contiguous.front(), "decode");
  EXPECT_EQ(e.variants(paged_problem(4, 64)), std::vector<std::string>{"decode"});
  const std::vector<std::string> prefill = e.variants(paged_problem(17, 0));
  EXPECT_EQ(prefill.size(), 6u);
  EXPECT_EQ(std::count(prefill.begin(), prefill.end(), "decode"), 0);
  // The decode kernel keeps no row statistics, so a backward never follows it: with a backward
  // the short shape runs the schedules alone, which write the statistics a backward reads.
  Problem backward = paged_problem(1, 0);
  backward.pass = AttentionPass::backward;
  const std::vector<std::string> with_backward = e.variants(backward);
  EXPECT_EQ(with_backward.size(), 6u);
  EXPECT_EQ(std::count(with_backward.begin(), with_backward.end(), "decode"), 0);
}
#endif

}  // namespace
}  // namespace sdpa::flash3
