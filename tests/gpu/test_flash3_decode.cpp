// flash3's decode kernel (Sq <= 16) against the reference at odd sizes: keys that fill no block, a
// block and one key, splits that end mid-block; grouped heads packed 1, 4 and 8 to a K/V head (and
// 8 x 16 rows: four CTAs of 32 rows); causal (top-left) and not; K/V contiguous and paged with 16-
// and 64-token pages whose last page is partly filled (and pages of 8, 32 and 128). flash3 runs on
// sm_90 only.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "backends/flash3.h"
#include "flash3_decode_plan.h"
#include "gpu/device_query.h"
#include "gpu/problem_shape.h"
#include "gpu_test_support.h"
#include "run/runner.h"

namespace sdpa {
namespace {

// (H, Hkv): one query head a K/V head, 4 and 8.
constexpr std::pair<int64_t, int64_t> kGroups[] = {{4, 4}, {8, 2}, {16, 2}};

Problem decode_problem(DType dtype, int64_t head_dim, std::pair<int64_t, int64_t> heads,
                       int64_t seq_q, int64_t seq_kv, bool causal, int64_t page_size) {
  Problem p;
  p.batch = 2;
  p.heads = heads.first;
  p.kv_heads = heads.second;
  p.seq_q = seq_q;
  p.seq_kv = seq_kv;
  p.head_dim = head_dim;
  p.dtype = dtype;
  p.causal = causal;
  p.page_size = page_size;
  return p;
}

// Runs flash3 on `problems` and expects each verified; skipped where flash3 does not run here.
void expect_verified(const std::vector<Problem>& problems) {
  const BackendEntry& flash3 = flash3_backend_entry();
  if (!flash3.built()) GTEST_SKIP() << "flash3 is not built: " << flash3.not_built_reason;
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  if (device.arch() != 90) GTEST_SKIP() << "flash3 runs on sm_90 only";
  const SweepPlan plan{problems, resolve_backends({"flash3"})};
  const uint64_t seed = std::random_device{}();
  const auto results = run_sweep(plan, device, seed, one_sample_timing()).cases;
  ASSERT_EQ(results.size(), problems.size());
  for (const CaseResult& r : results) {
    SCOPED_TRACE(fmt::format("{} {} causal={} seed={}", r.problem.shape_label(),
                             dtype_name(r.problem.dtype), r.problem.causal, seed));
    EXPECT_EQ(r.status, CaseStatus::ok) << r.reason;
    ASSERT_TRUE(r.verification.has_value());
    EXPECT_TRUE(r.verification->passed) << "rel L2 " << r.verification->rel_l2_error;
    EXPECT_EQ(r.verification->non_finite, 0u);
  }
}

TEST(Flash3Decode, MatchesReferenceOnOddSizes) {
  std::vector<Problem> problems;
  for (const DType dtype : {DType::bf16, DType::fp16})
    for (const int64_t d : {64, 128})
      for (const auto& heads : kGroups)
        for (const int64_t seq_q : {1, 4, 16})
          for (const int64_t seq_kv : {1, 17, 1000, 4097})
            for (const bool causal : {false, true})
              problems.push_back(decode_problem(dtype, d, heads, seq_q, seq_kv, causal, 0));
  expect_verified(problems);
}

TEST(Flash3Decode, PagedMatchesReferenceWhereTheLastPageIsPartlyFilled) {
  std::vector<Problem> problems;
  for (const DType dtype : {DType::bf16, DType::fp16})
    for (const int64_t d : {64, 128})
      for (const auto& heads : kGroups)
        for (const int64_t seq_q : {1, 4, 16})
          for (const int64_t seq_kv : {17, 1000, 4097})
            for (const int64_t page_size : {16, 64})
              problems.push_back(
                  decode_problem(dtype, d, heads, seq_q, seq_kv, seq_q == 4, page_size));
  expect_verified(problems);
}

// Pages of other sizes: 8 keys (eight pages a block), 32 (two) and 128 (two blocks a page); split
// (4097 keys) and not, the last page partly filled.
TEST(Flash3Decode, PagedMatchesReferenceAtOtherPageSizes) {
  std::vector<Problem> problems;
  for (const DType dtype : {DType::bf16, DType::fp16})
    for (const int64_t d : {64, 128})
      for (const int64_t seq_q : {1, 4})
        for (const int64_t seq_kv : {1, 17, 1000, 4097})
          for (const int64_t page_size : {8, 32, 128})
            problems.push_back(
                decode_problem(dtype, d, {8, 2}, seq_q, seq_kv, seq_q == 4, page_size));
  expect_verified(problems);
}

// A long cache: many splits of many blocks, combined by the last CTA; contiguous and paged.
TEST(Flash3Decode, LongCacheSplitsAndCombines) {
  std::vector<Problem> problems;
  for (const int64_t page_size : {0, 16, 64}) {
    Problem p = decode_problem(DType::bf16, 128, {32, 8}, 1, 131071, false, page_size);
    p.batch = 1;
    problems.push_back(p);
  }
  Problem g8 = decode_problem(DType::fp16, 64, {64, 8}, 4, 131000, false, 64);
  g8.batch = 1;
  problems.push_back(g8);
  expect_verified(problems);
}

// More CTAs than SMs: D64's one-tile kernel at its wide residency (4 CTAs an SM, 3 stages; the
// odd-size cases above run one CTA an SM or fewer, on the deeper ring), split and combined; K/V
// by TMA from a contiguous cache and pages of whole blocks (at D64 only such plans read them so),
// by cp.async from pages of 16.
TEST(Flash3Decode, ManyCtasAnSmRunTheWideRing) {
  std::vector<Problem> problems;
  for (const int64_t page_size : {0, 16, 64}) {
    Problem long_keys = decode_problem(DType::bf16, 64, {32, 8}, 1, 131071, false, page_size);
    long_keys.batch = 1;
    problems.push_back(long_keys);
    Problem many = decode_problem(DType::fp16, 64, {8, 8}, 1, 1000, false, page_size);
    many.batch = 40;
    problems.push_back(many);
  }
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  for (const Problem& p : problems) {
    const flash3::DecodePlan plan =
        flash3::plan_decode(attention_shape(p), device.sm_count, p.page_size);
    EXPECT_EQ(plan.ctas_per_sm, flash3::decode_slots(64, 16).wide) << p.shape_label();
    EXPECT_EQ(plan.tma_kv, p.page_size != 16) << p.shape_label();
  }
  // Two m16 tiles (H64/8 x Sq4 = 32 rows) at 3 CTAs an SM, by TMA.
  Problem two_tiles = decode_problem(DType::bf16, 64, {64, 8}, 4, 4097, false, 0);
  two_tiles.batch = 40;
  EXPECT_TRUE(flash3::plan_decode(attention_shape(two_tiles), device.sm_count).tma_kv);
  problems.push_back(two_tiles);
  expect_verified(problems);
}

}  // namespace
}  // namespace sdpa
