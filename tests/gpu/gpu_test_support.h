// Shared by the GPU tests.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "backends/backend.h"
#include "measure/timing.h"

namespace sdpa {

// Whether SDPA_TEST_EXPECT_ABSENT (a comma-separated list: nvml, cupti, cudnn) names `library` as
// absent on this GPU machine by design.
inline bool absence_expected(std::string_view library) {
  const char* list = std::getenv("SDPA_TEST_EXPECT_ABSENT");
  if (list == nullptr) return false;
  const std::string_view names = list;
  for (std::size_t begin = 0; begin <= names.size();) {
    const std::size_t end = std::min(names.find(',', begin), names.size());
    if (names.substr(begin, end - begin) == library) return true;
    begin = end + 1;
  }
  return false;
}

// A library a GPU machine should have: when it will not open the test fails, unless
// SDPA_TEST_EXPECT_ABSENT names it; then the test is skipped with the library's reason.
#define SDPA_REQUIRE_LIBRARY(opened, library, why)                                                   \
  do {                                                                                              \
    if (!(opened)) {                                                                                \
      if (::sdpa::absence_expected(library)) GTEST_SKIP() << library << " is expected absent: " << (why); \
      FAIL() << library << " will not open on this GPU machine: " << (why)                          \
             << " (SDPA_TEST_EXPECT_ABSENT=" << library << " names an absence by design)";         \
    }                                                                                               \
  } while (0)

// Correctness tests time nothing worth reading: one sample, no warm-up, no L2 flush.
inline TimingOptions one_sample_timing() {
  TimingOptions t;
  t.warmup = 0;
  t.hot = true;
  t.stopping.min_samples = 1;
  t.stopping.min_time_s = 0;
  t.stopping.timeout_s = 0;
  return t;
}

// A backend of a test's own that takes every problem, with no workspace unless given one.
inline BackendEntry test_backend_entry(std::string_view name, std::string_view summary,
                                       std::unique_ptr<Backend> (*create)(const std::string&),
                                       std::size_t (*workspace_bytes)(const Problem&) =
                                           [](const Problem&) -> std::size_t { return 0; }) {
  return {
      .name = name,
      .summary = summary,
      .dtypes = "bf16",
      .head_dims = "any",
      .archs = "any",
      .not_built_reason = "",
      .unsupported = [](const Problem&, const DeviceInfo&) -> std::optional<std::string> { return std::nullopt; },
      .workspace_bytes = workspace_bytes,
      .create = create,
  };
}

}  // namespace sdpa
