// The flash backward (FlashAttention-2 design, sm_80+; docs/kernel-notes.md has each version's figures):
// three kernels, as FA2's. A row pass computes delta = rowsum(dO * O) and zeroes the fp32 dQ
// accumulator (backward_rows.h); the main kernel (one CTA per key block of a KV head) writes dK
// and dV and adds dS K into the accumulator, kept in the order its warps hold dQ (FlashDqTile); a
// last kernel writes dQ = scale * accumulator in the dtype.
#pragma once

#include <cuda_runtime_api.h>

#include "backward_rows.h"
#include "fused_forward.h"

namespace sdpa {

// cudaErrorInvalidValue for a head dim other than 64 and 128.
cudaError_t launch_flash_backward(const FusedBackward& b);
// The main kernel's dynamic shared memory at a head dim it is built for (else 0).
int flash_backward_smem_bytes(int64_t head_dim);

namespace flash {
// Defined in flash_bwd_kernel.cuh, instantiated by one translation unit per head dimension.
template <int kHeadDim>
cudaError_t launch_flash_backward_main(const FusedBackward& b, const BackwardRows& rows);
template <int kHeadDim>
cudaError_t launch_flash_convert_dq(const FusedBackward& b, const BackwardRows& rows);
template <int kHeadDim>
int backward_main_smem_bytes();
}  // namespace flash

}  // namespace sdpa
