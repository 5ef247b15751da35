// Test-only device code: reads a paged K or V back into the contiguous layout through the block
// table, so a test backend can run a contiguous kernel on what the runner hands over in pages.
#pragma once

#include <cuda_runtime_api.h>

#include "paged_kv.h"

namespace sdpa::test {

cudaError_t launch_gather_from_pages(const AttentionShape& shape, const PagedKv& paged, const void* pool,
                                     void* contiguous, cudaStream_t stream);

}  // namespace sdpa::test
