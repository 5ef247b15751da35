// The host side our fused kernels share: one launch per forward, no workspace, and the same
// support checks (head dims compiled in, architecture, shared memory, grid limits).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "attention_shape.h"
#include "backends/backend.h"

namespace sdpa {

struct FusedKernel {
  bool (*supports_head_dim)(int64_t head_dim);
  int (*smem_bytes)(int64_t head_dim);
  cudaError_t (*launch)(DType t, const AttentionShape& shape, const void* q, const void* k,
                        const void* v, void* o, cudaStream_t s);
};

std::unique_ptr<Backend> make_fused_backend(const FusedKernel& kernel);
std::optional<std::string> fused_unsupported(const FusedKernel& kernel, const Problem& p,
                                             const DeviceInfo& device);

}  // namespace sdpa
