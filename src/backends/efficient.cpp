#include "backends/efficient.h"

#include "backends/fused_kernel.h"
#include "efficient_fwd.h"

namespace sdpa {
namespace {

constexpr FusedKernel kEfficient{efficient_forward_supports_head_dim, efficient_forward_smem_bytes,
                                 launch_efficient_forward};

std::optional<std::string> efficient_unsupported(const Problem& p, const DeviceInfo& device) {
  return fused_unsupported(kEfficient, p, device);
}

}  // namespace

const BackendEntry& efficient_backend_entry() {
  static const BackendEntry entry{
      .name = "efficient",
      .summary =
          "fused, memory-efficient design: 2x2 warp tiles, row maxima shared through "
          "shared memory, P staged in shared memory between the GEMMs",
      .dtypes = "bf16, fp16",
      .head_dims = "64, 128",
      .archs = "sm_80+",
      .not_built_reason = "",
      .unsupported = efficient_unsupported,
      .workspace_bytes = [](const Problem&) -> std::size_t { return 0; },
      .create = [](const std::string&) { return make_fused_backend(kEfficient); },
  };
  return entry;
}

}  // namespace sdpa
