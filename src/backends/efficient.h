#pragma once

#include "backends/backend.h"

namespace sdpa {

// One fused kernel of the memory-efficient design (kernels/efficient_fwd.cu).
const BackendEntry& efficient_backend_entry();

}  // namespace sdpa
