// The paged KV cache on the GPU: the scatter puts every key of contiguous K and V on the page the
// block table names, zeros past each sequence's end; a paged case runs only on a backend that
// reads pages, which gets K and V in pages alone and is verified against the contiguous reference;
// every other backend is skipped with the reason, and so is a case a backend declines only while
// preparing it. cuDNN reads the pages through its graph's paged cache load. Odd lengths: Skv 17,
// 1000, 4097; pages 16, 64.
#include <gtest/gtest.h>

#include <initializer_list>
#include <iostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "backends/backend.h"
#include "backends/cudnn.h"
#include "flash_fwd.h"
#include "fused_forward.h"
#include "gpu/check.h"
#include "gpu/device_buffer.h"
#include "gpu/device_query.h"
#include "gpu/problem_shape.h"
#include "gpu_test_support.h"
#include "model/errors.h"
#include "paged_gather.h"
#include "random_fill.h"
#include "run/paged_kv_pool.h"
#include "run/runner.h"

namespace sdpa {
namespace {

constexpr int64_t kOddLengths[] = {17, 1000, 4097};
constexpr int64_t kPageSizes[] = {16, 64};

std::vector<Problem> paged_problems(const std::vector<int64_t>& head_dims) {
  std::vector<Problem> problems;
  for (const int64_t d : head_dims)
    for (const int64_t seq_q : {1, 4})
      for (const int64_t seq_kv : kOddLengths)
        for (const int64_t page_size : kPageSizes) {
          Problem p;
          p.batch = 3;
          p.heads = 8;
          p.kv_heads = 2;
          p.seq_q = seq_q;
          p.seq_kv = seq_kv;
          p.head_dim = d;
          p.causal = false;
          p.page_size = page_size;
          problems.push_back(p);
        }
  return problems;
}

std::vector<uint16_t> to_host(const void* device, int64_t elements) {
  std::vector<uint16_t> host(static_cast<std::size_t>(elements));
  SDPA_CHECK_CUDA(cudaMemcpy(host.data(), device, host.size() * sizeof(uint16_t), cudaMemcpyDeviceToHost));
  return host;
}

TEST(PagedKvPool, ScattersContiguousKvOntoTheTablesPages) {
  for (const Problem& p : paged_problems({64})) {
    if (p.seq_q != 1) continue;
    SCOPED_TRACE(p.shape_label());
    const uint64_t seed = std::random_device{}();
    CudaStream stream;
    DeviceBuffer k(static_cast<std::size_t>(p.kv_elements()) * 2), v(static_cast<std::size_t>(p.kv_elements()) * 2);
    SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, k.get(), p.kv_elements(), seed, 1, stream.get()));
    SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, v.get(), p.kv_elements(), seed, 2, stream.get()));
    PagedKvPool pool(p);
    pool.fill(k.get(), v.get(), seed, stream.get());
    SDPA_CHECK_CUDA(cudaStreamSynchronize(stream.get()));
    const PagedKv view = pool.view();
    const PagedKvLayout& l = view.layout;
    const std::vector<int32_t> table = shuffled_block_table(p.batch, l.pages_per_sequence, seed);
    std::vector<int32_t> device_table(table.size());
    SDPA_CHECK_CUDA(cudaMemcpy(device_table.data(), view.block_table, table.size() * sizeof(int32_t),
                               cudaMemcpyDeviceToHost));
    EXPECT_EQ(device_table, table);
    for (const auto& [contiguous, paged] : {std::pair{&k, view.k_pool}, std::pair{&v, view.v_pool}}) {
      const std::vector<uint16_t> dense = to_host(contiguous->get(), p.kv_elements());
      const std::vector<uint16_t> pages = to_host(paged, p.kv_pool_elements());
      std::vector<bool> reached(pages.size(), false);
      int64_t wrong = 0;
      for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t h = 0; h < p.kv_heads; ++h)
          for (int64_t s = 0; s < p.seq_kv; ++s) {
            const int64_t at = paged_kv_offset(l, table.data(), b, h, s);
            for (int64_t d = 0; d < p.head_dim; ++d) {
              const auto i = static_cast<std::size_t>(((b * p.kv_heads + h) * p.seq_kv + s) * p.head_dim + d);
              wrong += pages[static_cast<std::size_t>(at + d)] != dense[i];
              reached[static_cast<std::size_t>(at + d)] = true;
            }
          }
      EXPECT_EQ(wrong, 0);
      int64_t nonzero_tail = 0;
      for (std::size_t i = 0; i < pages.size(); ++i) nonzero_tail += !reached[i] && pages[i] != 0;
      EXPECT_EQ(nonzero_tail, 0);
    }
  }
}

// A backend of this test's own that reads pages: it gathers them back and runs flash on the
// result, so the runner's paged path (pool, table, null contiguous K/V) is checked end to end.
class GatheringFlash final : public Backend {
 public:
  void prepare(const Problem& p, cudaStream_t) override {
    shape_ = attention_shape(p);
    dtype_ = p.dtype;
    k_ = DeviceBuffer(static_cast<std::size_t>(p.kv_elements()) * 2);
    v_ = DeviceBuffer(static_cast<std::size_t>(p.kv_elements()) * 2);
  }
  void run(const AttentionTensors& t, cudaStream_t stream) override {
    if (t.paged == nullptr || t.k != nullptr || t.v != nullptr) {
      ADD_FAILURE() << "a paged problem must come in pages alone";
      return;  // O stays poisoned: the case fails verification too
    }
    SDPA_CHECK_CUDA(test::launch_gather_from_pages(shape_, *t.paged, t.paged->k_pool, k_.get(), stream));
    SDPA_CHECK_CUDA(test::launch_gather_from_pages(shape_, *t.paged, t.paged->v_pool, v_.get(), stream));
    SDPA_CHECK_CUDA(kFlashForward.launch({dtype_, shape_, t.q, k_.get(), v_.get(), t.o, stream}));
  }

 private:
  AttentionShape shape_{};
  DType dtype_ = DType::bf16;
  DeviceBuffer k_, v_;
};

std::vector<CaseResult> run_paged(const std::vector<BackendChoice>& backends, const std::vector<int64_t>& head_dims) {
  DeviceInfo device;
  std::string error;
  EXPECT_TRUE(query_device(0, device, error)) << error;
  const SweepPlan plan{paged_problems(head_dims), backends};
  return run_sweep(plan, device, std::random_device{}(), one_sample_timing()).cases;
}

TEST(PagedKv, ARunnerCaseInPagesMatchesTheContiguousReference) {
  BackendEntry entry = test_backend_entry("gathering-flash", "gathers pages, then flash",
                                          [](const std::string&) -> std::unique_ptr<Backend> {
                                            return std::make_unique<GatheringFlash>();
                                          });
  entry.reads_paged_kv = true;
  for (const CaseResult& r : run_paged({{&entry, false}}, {64, 128})) {
    SCOPED_TRACE(r.problem.shape_label());
    EXPECT_EQ(r.status, CaseStatus::ok) << r.reason;
    ASSERT_TRUE(r.verification.has_value());
    EXPECT_TRUE(r.verification->passed);
    EXPECT_GE(r.predicted_bytes, PagedKvPool::bytes(r.problem));
  }
}

TEST(PagedKv, EveryBackendReadsPagesOrIsSkippedWithTheReason) {
  std::vector<BackendChoice> choices;
  for (const BackendEntry& e : backend_registry())
    if (e.built()) choices.push_back({&e, false});
  int verified = 0;
  for (const CaseResult& r : run_paged(choices, {64, 128})) {
    SCOPED_TRACE(fmt::format("{} {}", r.backend, r.problem.shape_label()));
    const BackendEntry& entry = *find_backend(r.backend);
    if (!entry.reads_paged_kv) {
      EXPECT_EQ(r.status, CaseStatus::skipped);
      EXPECT_EQ(r.reason, paged_kv_unsupported(r.backend));
      continue;
    }
    if (r.status == CaseStatus::skipped) continue;  // the backend's own limits (arch, library version)
    EXPECT_EQ(r.status, CaseStatus::ok) << r.reason;
    ASSERT_TRUE(r.verification.has_value());
    EXPECT_TRUE(r.verification->passed);
    ++verified;
  }
  if (verified == 0) GTEST_SKIP() << "no backend of this build reads a paged K/V cache here yet (issue 32)";
}

// A backend that finds only in prepare() that it cannot run a case, as cuDNN does when no engine
// takes a graph: the case is skipped with its reason, never failed and never run.
class DecliningBackend final : public Backend {
 public:
  void prepare(const Problem&, cudaStream_t) override {
    throw CaseDeclined("no engine takes this graph");
  }
  void run(const AttentionTensors&, cudaStream_t) override {
    ADD_FAILURE() << "a declined case ran";
  }
};

TEST(PagedKv, ACaseDeclinedInPrepareIsSkippedWithTheReason) {
  BackendEntry entry = test_backend_entry("declining", "declines in prepare",
                                          [](const std::string&) -> std::unique_ptr<Backend> {
                                            return std::make_unique<DecliningBackend>();
                                          });
  entry.reads_paged_kv = true;
  for (const CaseResult& r : run_paged({{&entry, false}}, {64})) {
    SCOPED_TRACE(r.problem.shape_label());
    EXPECT_EQ(r.status, CaseStatus::skipped);
    EXPECT_EQ(r.reason, "no engine takes this graph");
    EXPECT_FALSE(r.verification.has_value());
  }
}

// cuDNN's paged graph at the decode sizes' odd neighbours: Skv 17, 1000, 4097 (none a multiple of
// either page size), pages of 16 and 64, Sq 1 and 4, grouped (H32 over Hkv8) and not (H8 = Hkv8),
// D 64 and 128, bf16, non-causal as decode runs.
std::vector<Problem> cudnn_paged_problems() {
  std::vector<Problem> problems;
  for (const int64_t d : {64, 128})
    for (const auto& [heads, kv_heads] :
         std::initializer_list<std::pair<int64_t, int64_t>>{{32, 8}, {8, 8}})
      for (const int64_t seq_q : {1, 4})
        for (const int64_t seq_kv : kOddLengths)
          for (const int64_t page_size : kPageSizes) {
            Problem p;
            p.batch = 2;
            p.heads = heads;
            p.kv_heads = kv_heads;
            p.seq_q = seq_q;
            p.seq_kv = seq_kv;
            p.head_dim = d;
            p.dtype = DType::bf16;
            p.causal = false;
            p.page_size = page_size;
            problems.push_back(p);
          }
  return problems;
}

// Every case verified against the contiguous reference, or skipped with the loaded cuDNN's reason
// (its version, or no engine for the graph): a paged case never runs contiguous K and V (it has
// none: the runner hands it pages alone) and says in its setup that it read pages.
TEST(PagedKv, CudnnReadsPagesThroughItsGraphOnOddSizes) {
  const BackendEntry& cudnn = cudnn_backend_entry();
  if (!cudnn.built()) GTEST_SKIP() << "built without cuDNN: " << cudnn.not_built_reason;
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  Problem contiguous = cudnn_paged_problems().front();
  contiguous.page_size = 0;
  const auto why = cudnn.unsupported(contiguous, device);
  SDPA_REQUIRE_LIBRARY(!why.has_value(), "cudnn", why.value_or(""));
  const uint64_t seed = std::random_device{}();
  const SweepPlan plan{cudnn_paged_problems(), {{&cudnn, false}}};
  int verified = 0, declined = 0;
  std::string first_declined;
  for (const CaseResult& r : run_sweep(plan, device, seed, one_sample_timing()).cases) {
    SCOPED_TRACE(fmt::format("{} seed={}", r.problem.shape_label(), seed));
    if (r.status == CaseStatus::skipped) {
      const bool gate = r.reason.starts_with("paged K/V needs cuDNN");
      const bool refused =
          r.reason.find("has no plan for the paged K/V graph") != std::string::npos;
      EXPECT_TRUE(gate || refused) << r.reason;
      if (first_declined.empty()) first_declined = r.reason;
      ++declined;
      continue;
    }
    EXPECT_EQ(r.status, CaseStatus::ok) << r.reason;
    ASSERT_TRUE(r.verification.has_value());
    EXPECT_TRUE(r.verification->passed) << r.verification->rel_l2_error;
    EXPECT_EQ(r.verification->non_finite, 0u);
    EXPECT_NE(r.setup.config.find("paged K/V"), std::string::npos) << r.setup.config;
    ++verified;
  }
  std::cout << fmt::format("cuDNN {}: {} paged cases verified, {} declined{}\n",
                           device.cudnn_version, verified, declined,
                           first_declined.empty() ? "" : " (first: " + first_declined + ")");
  if (verified == 0) GTEST_SKIP() << "the loaded cuDNN ran no paged case: " << first_declined;
}

}  // namespace
}  // namespace sdpa
