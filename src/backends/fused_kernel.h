// The one way to declare a backend that is one of our fused kernels: one launch per forward, the
// workspace its kernel asks for allocated and zeroed in prepare(), and what `list` prints and
// unsupported() answers (and whether it reads a paged K/V cache) read from the kernel's limits
// (kernels/fused_forward.h), the same limits its launcher checks.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "backends/backend.h"
#include "fused_forward.h"

namespace sdpa {

std::unique_ptr<Backend> make_fused_backend(const FusedForwardKernel& kernel);
std::size_t fused_workspace_bytes(const FusedForwardKernel& kernel, const Problem& p);
std::optional<std::string> fused_unsupported(const FusedForwardKernel& kernel, const Problem& p,
                                             const DeviceInfo& device);

// What `list` prints of a fused kernel: its head dims ("64, 128") and architectures ("sm_80+").
struct FusedListing {
  std::string head_dims;
  std::string archs;
};
FusedListing fused_listing(const FusedKernelLimits& limits);

template <const FusedForwardKernel& kKernel>
BackendEntry fused_backend_entry(std::string_view name, std::string_view summary) {
  static const FusedListing listing = fused_listing(kKernel.limits);
  return {
      .name = name,
      .summary = summary,
      .dtypes = "bf16, fp16",
      .head_dims = listing.head_dims,
      .archs = listing.archs,
      .not_built_reason = "",
      .no_backward_reason = kKernel.launch_backward != nullptr ? "" : kNoBackwardYet,
      .unsupported = [](const Problem& p,
                        const DeviceInfo& device) { return fused_unsupported(kKernel, p, device); },
      .workspace_bytes = [](const Problem& p) { return fused_workspace_bytes(kKernel, p); },
      .create = [](const std::string&) { return make_fused_backend(kKernel); },
      .pytorch_path = name,
      .reads_paged_kv = kKernel.limits.reads_paged_kv,
  };
}

}  // namespace sdpa
