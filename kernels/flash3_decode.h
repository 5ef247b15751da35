// flash3's decode kernel (flash3_decode_kernel.cuh), as the flash3 launcher calls it for short
// queries (flash3_decode_plan.h states the rule). Declared only where flash3 is built
// (SDPA_HAVE_FLASH3).
#pragma once

#include <cstddef>

#include "flash3_decode_plan.h"
#include "fused_forward.h"

namespace sdpa::flash3 {

// The plan of a decode launch of `shape` on the current device (its SM count; without a device,
// the most SMs a persistent flash3 grid uses), K/V contiguous (`page_size` 0) or in pages of
// `page_size` tokens.
DecodePlan plan_decode_here(const AttentionShape& shape, int64_t page_size = 0);

// The workspace a decode launch of `shape` on the current device needs (0 when it splits nothing).
std::size_t decode_workspace_bytes_here(const AttentionShape& shape);

// One decode forward; the caller has checked f against the kernel's limits.
cudaError_t launch_flash3_decode(const FusedForward& f);

// Defined in flash3_decode_kernel.cuh, instantiated by one translation unit per head dim.
template <int kHeadDim>
cudaError_t launch_flash3_decode_hdim(const FusedForward& f, const DecodePlan& plan);

}  // namespace sdpa::flash3
