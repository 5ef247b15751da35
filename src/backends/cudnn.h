#pragma once

#include "backends/backend.h"

namespace sdpa {

// cuDNN's fused attention, built as an operation graph through the backend descriptor API
// (backends/cudnn.cpp); listed as not built where cuDNN's headers were missing at build time
// (backends/cudnn_not_built.cpp).
const BackendEntry& cudnn_backend_entry();

}  // namespace sdpa
