#pragma once

#include "backends/backend.h"

namespace sdpa {

// One fused kernel of the FlashAttention-2 design (kernels/flash_fwd_kernel.cuh).
const BackendEntry& flash_backend_entry();

}  // namespace sdpa
