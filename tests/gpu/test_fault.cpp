// Failures inside a sweep. These poison the process's CUDA context, so CTest runs them in a
// process of their own (tests/CMakeLists.txt), never beside the other GPU tests.
#include <gtest/gtest.h>

#include "backends/backend.h"
#include "fault_kernel.h"
#include "gpu/check.h"
#include "gpu/device_query.h"
#include "gpu_test_support.h"
#include "run/runner.h"

namespace sdpa {
namespace {

class IllegalAddressBackend final : public Backend {
 public:
  void prepare(const Problem&, cudaStream_t) override {}
  void run(const AttentionTensors&, cudaStream_t stream) override {
    SDPA_CHECK_CUDA(test::launch_illegal_address_write(stream));
  }
};

const BackendEntry& illegal_address_entry() {
  static const BackendEntry entry = test_backend_entry(
      "test-illegal-address", "writes through a bad pointer",
      [](const std::string&) -> std::unique_ptr<Backend> { return std::make_unique<IllegalAddressBackend>(); });
  return entry;
}

TEST(FaultInjection, IllegalAddressStopsTheSweepWithTheResultsSoFar) {
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  Problem p;
  p.batch = 1;
  p.heads = p.kv_heads = 2;
  p.seq_q = p.seq_kv = 128;
  p.head_dim = 64;
  SweepPlan plan{{p, p}, {{find_backend("naive-inplace"), false}, {&illegal_address_entry(), false},
                          {find_backend("flash"), false}}};
  const SweepResult result = run_sweep(plan, device, 1, one_sample_timing());
  ASSERT_EQ(result.cases.size(), 2u);  // naive-inplace, then the faulting case; nothing after it
  EXPECT_EQ(result.cases[0].status, CaseStatus::ok);
  EXPECT_EQ(result.cases[1].backend, "test-illegal-address");
  EXPECT_EQ(result.cases[1].status, CaseStatus::failed);
  EXPECT_NE(result.stopped_because.find("unusable after test-illegal-address"), std::string::npos)
      << result.stopped_because;
  EXPECT_NE(result.stopped_because.find("cudaErrorIllegalAddress"), std::string::npos) << result.stopped_because;
}

}  // namespace
}  // namespace sdpa
