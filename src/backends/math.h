#pragma once

#include "backends/backend.h"

namespace sdpa {

// PyTorch's math path of scaled_dot_product_attention for 16-bit inputs, kernel for kernel.
const BackendEntry& math_backend_entry();

}  // namespace sdpa
