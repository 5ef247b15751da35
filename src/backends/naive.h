#pragma once

#include "backends/backend.h"

namespace sdpa {

// The hand-written baseline: bf16/fp16 GEMMs on tensor cores with every step in between
// materialised in HBM. `naive` fills the mask out of place (a copy of the scores first).
const BackendEntry& naive_backend_entry();
const BackendEntry& naive_inplace_backend_entry();

}  // namespace sdpa
