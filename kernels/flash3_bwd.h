// The flash3 backward (FlashAttention-3 design, sm_90a): three kernels. A row pass
// (backward_rows.h, shared with flash) writes delta = rowsum(dO * O) and a copy of the forward's
// LSE, both padded to whole 64-row boxes of a head (TMA reads them), and zeroes the fp32 dQ
// accumulator; the main kernel (one CTA per block of 128 keys of a KV head: a TMA producer
// warpgroup, two wgmma consumer warpgroups) writes dK and dV and adds dS K into the accumulator
// by TMA reduce-adds from shared memory; the shared dQ conversion ends it.
// Declared only in builds whose architectures include sm_90a (SDPA_HAVE_FLASH3).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "fused_forward.h"

namespace sdpa {

// cudaErrorInvalidValue for a head dim other than 64 and 128, or without the forward's LSE.
cudaError_t launch_flash3_backward(const FusedBackward& b);

namespace flash3 {

// Where the row pass left the rows' statistics: [B * Hq, stat_rows] each, rows past seq_q
// holding LSE = +inf (P = 0) and delta = 0; and the dQ accumulator, [B, Hq, Sq, D].
struct Flash3BwdRows {
  const float* lse;
  const float* delta;
  float* dq_accum;
  int64_t stat_rows;
};

// Defined in flash3_bwd_kernel.cuh, instantiated by one translation unit per head dimension.
template <int kHeadDim>
cudaError_t launch_flash3_backward_main(const FusedBackward& b, const Flash3BwdRows& rows);

}  // namespace flash3
}  // namespace sdpa
