#pragma once

#include <cuda_runtime_api.h>

namespace sdpa::test {

cudaError_t launch_illegal_address_write(cudaStream_t stream);

}  // namespace sdpa::test
