#include "backends/flash.h"

#include "backends/fused_kernel.h"
#include "flash_fwd.h"

namespace sdpa {

const BackendEntry& flash_backend_entry() {
  static const BackendEntry entry = fused_backend_entry<kFlashForward>(
      "flash",
      "fused, FlashAttention-2 design: mma.sync + ldmatrix, cp.async double buffering, softmax "
      "and P in registers");
  return entry;
}

}  // namespace sdpa
