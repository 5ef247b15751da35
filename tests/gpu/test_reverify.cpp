// A backend whose first forward is right and whose later ones are not (state kept across
// launches gone bad) fails its case: the runner checks the output again after the timing pass.
#include <gtest/gtest.h>

#include "backends/backend.h"
#include "gpu/device_query.h"
#include "gpu_test_support.h"
#include "run/runner.h"

namespace sdpa {
namespace {

// naive-inplace for the first forward, then nothing: O keeps the runner's poison.
class RightOnceBackend final : public Backend {
 public:
  RightOnceBackend() : inner_(find_backend("naive-inplace")->create("")) {}
  void prepare(const Problem& p, cudaStream_t stream) override { inner_->prepare(p, stream); }
  void run(const AttentionTensors& t, cudaStream_t stream) override {
    if (forwards_++ == 0) inner_->run(t, stream);
  }

 private:
  std::unique_ptr<Backend> inner_;
  int forwards_ = 0;
};

const BackendEntry& right_once_entry() {
  static const BackendEntry entry = test_backend_entry(
      "test-right-once", "right on its first forward only",
      [](const std::string&) -> std::unique_ptr<Backend> { return std::make_unique<RightOnceBackend>(); },
      find_backend("naive-inplace")->workspace_bytes);
  return entry;
}

TEST(Reverification, ABackendWrongAfterItsFirstForwardFailsWithoutTimes) {
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  Problem p;
  p.batch = 1;
  p.heads = p.kv_heads = 2;
  p.seq_q = p.seq_kv = 130;
  p.head_dim = 64;
  const SweepPlan plan{{p}, {{find_backend("naive-inplace"), false}, {&right_once_entry(), false}}};
  const SweepResult result = run_sweep(plan, device, 7, one_sample_timing());
  ASSERT_EQ(result.cases.size(), 2u);
  EXPECT_EQ(result.cases[0].status, CaseStatus::ok) << result.cases[0].reason;
  const CaseResult& wrong = result.cases[1];
  EXPECT_EQ(wrong.status, CaseStatus::failed);
  EXPECT_NE(wrong.reason.find("verification failed after the timing pass"), std::string::npos) << wrong.reason;
  ASSERT_TRUE(wrong.verification.has_value());
  EXPECT_FALSE(wrong.verification->passed);
  EXPECT_GT(wrong.verification->non_finite, 0u);
  EXPECT_FALSE(wrong.timing.has_value());
}

}  // namespace
}  // namespace sdpa
