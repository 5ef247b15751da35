// The page math of the paged KV cache (kernels/paged_kv.h) and the shuffled block table, on the
// CPU: every key lands once, inside the pool, on the page the table names; only the unused tail
// of each sequence's last page is left unwritten.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "gpu/problem_shape.h"
#include "paged_kv.h"
#include "run/paged_kv_pool.h"
#include "run/runner.h"

namespace sdpa {
namespace {

Problem small_paged(int64_t seq_kv, int64_t page_size) {
  Problem p;
  p.batch = 3;
  p.heads = 4;
  p.kv_heads = 2;
  p.seq_q = 1;
  p.seq_kv = seq_kv;
  p.head_dim = 8;
  p.page_size = page_size;
  return p;
}

TEST(BlockTable, IsAPermutationFixedByTheSeed) {
  const std::vector<int32_t> table = shuffled_block_table(5, 7, 42);
  ASSERT_EQ(table.size(), 35u);
  std::vector<int32_t> sorted = table;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int32_t> every(35);
  std::iota(every.begin(), every.end(), 0);
  EXPECT_EQ(sorted, every);
  EXPECT_NE(table, every);  // shuffled: 1 chance in 35! to be wrong
  EXPECT_EQ(shuffled_block_table(5, 7, 42), table);
  EXPECT_NE(shuffled_block_table(5, 7, 43), table);
  EXPECT_EQ(shuffled_block_table(1, 1, 42), std::vector<int32_t>{0});
}

TEST(PagedKvLayout, StridesFollowThePageShape) {
  const Problem p = small_paged(17, 16);
  const PagedKvLayout l = paged_kv_layout(attention_shape(p), p.page_size);
  EXPECT_EQ(l.pages_per_sequence, 2);
  EXPECT_EQ(l.pool_pages, 6);
  EXPECT_EQ(l.row_stride, 8);
  EXPECT_EQ(l.head_stride, 16 * 8);
  EXPECT_EQ(l.page_stride, 2 * 16 * 8);
  EXPECT_EQ(paged_kv_pool_elements(l), p.kv_pool_elements());
}

// Every (b, h, s, d) of contiguous K lands at a distinct pool element on the page the table
// names; the elements no key reaches are exactly the last pages' tails.
void check_scatter(int64_t seq_kv, int64_t page_size) {
  SCOPED_TRACE(::testing::Message() << "Skv " << seq_kv << " page " << page_size);
  const Problem p = small_paged(seq_kv, page_size);
  const PagedKvLayout l = paged_kv_layout(attention_shape(p), page_size);
  const std::vector<int32_t> table = shuffled_block_table(p.batch, l.pages_per_sequence, 7);
  std::vector<int> hits(static_cast<std::size_t>(paged_kv_pool_elements(l)), 0);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.kv_heads; ++h)
      for (int64_t s = 0; s < p.seq_kv; ++s) {
        const int64_t at = paged_kv_offset(l, table.data(), b, h, s);
        ASSERT_GE(at, 0);
        ASSERT_LE(at + p.head_dim, paged_kv_pool_elements(l));
        const int64_t page = table[static_cast<std::size_t>(b * l.pages_per_sequence + s / page_size)];
        EXPECT_EQ(at / l.page_stride, page);
        EXPECT_EQ(at % l.page_stride, h * l.head_stride + (s % page_size) * l.row_stride);
        for (int64_t d = 0; d < p.head_dim; ++d) ++hits[static_cast<std::size_t>(at + d)];
      }
  const auto written = std::count(hits.begin(), hits.end(), 1);
  const auto unwritten = std::count(hits.begin(), hits.end(), 0);
  EXPECT_EQ(written, p.kv_elements());
  EXPECT_EQ(unwritten, p.batch * p.kv_heads * (l.pages_per_sequence * page_size - seq_kv) * p.head_dim);
  EXPECT_EQ(written + unwritten, static_cast<int64_t>(hits.size()));  // no element written twice
}

TEST(PagedKvLayout, ScatterCoversEveryKeyOnceAtOddSizes) {
  for (const int64_t seq_kv : {1, 17, 64, 1000, 4097})
    for (const int64_t page_size : {1, 16, 64, 5000}) check_scatter(seq_kv, page_size);
}

TEST(PagedKvPool, BytesCountBothPoolsAndTheTable) {
  const Problem p = small_paged(4097, 64);  // 65 pages per sequence
  EXPECT_EQ(PagedKvPool::bytes(p), 2u * 3 * 65 * 64 * 2 * 8 * 2 + 3u * 65 * sizeof(int32_t));
  EXPECT_EQ(PagedKvPool::bytes(small_paged(4097, 0)), 0u);
  // A case's predicted memory (--dry-run's) holds them beside the contiguous K and V.
  const BackendEntry& flash = *find_backend("flash");
  EXPECT_EQ(predicted_case_bytes(p, flash) - predicted_case_bytes(small_paged(4097, 0), flash), PagedKvPool::bytes(p));
}

}  // namespace
}  // namespace sdpa
