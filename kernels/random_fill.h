// Deterministic counter-based random inputs and output poisoning.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "dtype.h"

namespace sdpa {

// Standard-normal values; element i depends only on (seed, stream_id, i).
cudaError_t launch_fill_normal(DType t, void* out, int64_t n, uint64_t seed, uint64_t stream_id,
                               cudaStream_t s);
// Fills with NaN so any element a kernel fails to write is caught by verification.
cudaError_t launch_poison(DType t, void* out, int64_t n, cudaStream_t s);

}  // namespace sdpa
