// Shared by the GPU tests.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "backends/backend.h"
#include "measure/timing.h"

namespace sdpa {

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
