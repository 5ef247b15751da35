#include "backends/flash3.h"

#ifdef SDPA_HAVE_FLASH3
#include "backends/fused_kernel.h"
#include "flash3_fwd.h"
#endif

namespace sdpa {

namespace {
constexpr std::string_view kSummary =
    "fused, FlashAttention-3 design: TMA into a K/V ring, wgmma, a producer warpgroup and two "
    "consumer warpgroups";
}  // namespace

const BackendEntry& flash3_backend_entry() {
#ifdef SDPA_HAVE_FLASH3
  static const BackendEntry entry = fused_backend_entry<kFlash3Forward>("flash3", kSummary);
#else
  static const BackendEntry entry{
      .name = "flash3",
      .summary = kSummary,
      .dtypes = "bf16, fp16",
      .head_dims = "64, 128",
      .archs = "sm_90a",
      .not_built_reason = "its kernel is sm_90a code and CMAKE_CUDA_ARCHITECTURES has no 90a",
      .unsupported = nullptr,
      .workspace_bytes = nullptr,
      .create = nullptr,
  };
#endif
  return entry;
}

}  // namespace sdpa
