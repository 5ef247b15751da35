// The flash3 backend's fused forward kernel (FlashAttention-3 design: TMA, wgmma, warp
// specialisation; sm_90a only). Declared only in builds whose architectures include sm_90a
// (SDPA_HAVE_FLASH3).
#pragma once

#include "fused_forward.h"

namespace sdpa {

// How a consumer warpgroup orders its work: serial (S, softmax, P V per key block, one after
// the other), overlap (block n's S issued with block n-1's P V, the softmax under that P V), and
// pingpong (overlap, with the two consumers taking turns to issue their GEMMs).
enum class Flash3Schedule { serial, overlap, pingpong };

// The backend's kernel: the decode kernel where Sq <= 16 (flash3_decode_plan.h, which also reads a
// paged K/V cache), else the prefill kernel with each head dim's default schedule
// (flash3_traits.cuh).
extern const FusedForwardKernel kFlash3Forward;
// The decode kernel alone: refuses Sq > 16.
extern const FusedForwardKernel kFlash3Decode;
// The prefill kernel with a schedule, on every shape; reads no pages. Persistent: one CTA per SM
// looping over the query tiles (heaviest causal tiles first, every gridDim.x-th), instead of one
// CTA per tile.
const FusedForwardKernel& flash3_forward(Flash3Schedule schedule, bool persistent);

}  // namespace sdpa
