#pragma once

#include "backends/backend.h"

namespace sdpa {

// Our fused kernel of the FlashAttention-3 design for sm_90a (kernels/flash3_fwd_kernel.cuh);
// not built where the CUDA architectures leave out 90a.
const BackendEntry& flash3_backend_entry();

}  // namespace sdpa
