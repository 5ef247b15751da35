// The flash backward (FlashAttention-2 design, sm_80+; work in progress, not yet run on a GPU):
// three kernels, as FA2's. A preprocess computes delta = rowsum(dO * O) and zeroes the fp32 dQ
// accumulator; the main kernel (one CTA per key block of a KV head) writes dK and dV and adds
// dS K into the accumulator; a last kernel writes dQ = scale * accumulator in the dtype.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "attention_shape.h"
#include "dtype.h"

namespace sdpa {

struct FlashBackward {
  DType dtype;
  AttentionShape shape;
  const void* q;
  const void* k;
  const void* v;
  const void* o;
  const void* d_out;
  const float* lse;  // the forward's FusedForward::lse, [B, Hq, Sq]
  float* delta;      // workspace, [B, Hq, Sq]
  float* dq_accum;   // workspace, [B, Hq, Sq, D]
  void* dq;
  void* dk;
  void* dv;
  cudaStream_t stream;
};

// Floats of workspace a backward needs (delta and the dQ accumulator).
inline int64_t flash_backward_workspace_floats(const AttentionShape& s) {
  return s.batch * s.heads * s.seq_q * (1 + s.head_dim);
}

// cudaErrorInvalidValue for a head dim other than 64 and 128.
cudaError_t launch_flash_backward(const FlashBackward& b);

namespace flash {
// Defined in flash_bwd_kernel.cuh, instantiated by one translation unit per head dimension.
template <int kHeadDim>
cudaError_t launch_flash_backward_main(const FlashBackward& b);
}  // namespace flash

}  // namespace sdpa
