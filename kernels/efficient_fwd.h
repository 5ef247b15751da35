// The efficient backend's fused forward kernel: the memory-efficient (xFormers / CUTLASS
// "cutlassF") design, sm_80 and newer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "attention_shape.h"
#include "dtype.h"

namespace sdpa {

// Head dimensions the kernel is compiled for.
bool efficient_forward_supports_head_dim(int64_t head_dim);
// Dynamic shared memory one CTA asks for at `head_dim` (0 when the head dim is unsupported).
int efficient_forward_smem_bytes(int64_t head_dim);

// O = softmax(scale * Q K^T [causal mask]) V in one kernel on `s`. Q, O: [B, Hq, Sq, D];
// K, V: [B, Hkv, Skv, D]; all contiguous. Returns cudaErrorInvalidValue for an unsupported
// shape, else cudaGetLastError().
cudaError_t launch_efficient_forward(DType t, const AttentionShape& shape, const void* q,
                                     const void* k, const void* v, void* o, cudaStream_t s);

}  // namespace sdpa
