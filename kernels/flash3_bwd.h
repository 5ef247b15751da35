// The flash3 backward (FlashAttention-3 design, sm_90a): three kernels. A row pass
// (backward_rows.h, shared with flash) writes delta = rowsum(dO * O) and a copy of the forward's
// LSE, both padded to whole 64-row boxes of a head (TMA reads them), and zeroes the fp32 dQ
// accumulator; the main kernel (one CTA per block of 128 keys of a KV head: a TMA producer
// warpgroup, two wgmma consumer warpgroups) writes dK and dV and adds dS K into the accumulator,
// a tile a step, by bulk reduce-adds from shared memory; a conversion of the accumulator's tile
// order (Flash3DqTile) ends it.
// Declared only in builds whose architectures include sm_90a (SDPA_HAVE_FLASH3).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backward_rows.h"
#include "fused_forward.h"

namespace sdpa {

// cudaErrorInvalidValue for a head dim other than 64 and 128, or without the forward's LSE.
cudaError_t launch_flash3_backward(const FusedBackward& b);

namespace flash3 {

// Defined in flash3_bwd_kernel.cuh, instantiated by one translation unit per head dimension.
template <int kHeadDim>
cudaError_t launch_flash3_backward_main(const FusedBackward& b, const BackwardRows& rows);

}  // namespace flash3
}  // namespace sdpa
