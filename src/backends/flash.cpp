#include "backends/flash.h"

#include "backends/fused_kernel.h"
#include "flash_fwd.h"

namespace sdpa {
namespace {

constexpr FusedKernel kFlash{flash_forward_supports_head_dim, flash_forward_smem_bytes,
                             launch_flash_forward};

std::optional<std::string> flash_unsupported(const Problem& p, const DeviceInfo& device) {
  return fused_unsupported(kFlash, p, device);
}

}  // namespace

const BackendEntry& flash_backend_entry() {
  static const BackendEntry entry{
      .name = "flash",
      .summary =
          "fused, FlashAttention-2 design: mma.sync + ldmatrix, cp.async double buffering, "
          "softmax and P in registers",
      .dtypes = "bf16, fp16",
      .head_dims = "64, 128",
      .archs = "sm_80+",
      .not_built_reason = "",
      .unsupported = flash_unsupported,
      .workspace_bytes = [](const Problem&) -> std::size_t { return 0; },
      .create = [](const std::string&) { return make_fused_backend(kFlash); },
  };
  return entry;
}

}  // namespace sdpa
