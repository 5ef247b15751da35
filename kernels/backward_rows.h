// The small kernels around a fused backward's main kernel, shared by flash and flash3: the row
// pass before it and the dQ conversion after it. Both move 16 bytes a lane: they are
// bandwidth-bound and, with 2- and 4-byte accesses, ran 10-25% behind cuDNN's (kernel-notes).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "fused_forward.h"

namespace sdpa {

// Where the row pass writes, all in b.workspace. Rows are [B * Hq, stat_rows]; rows past seq_q
// (stat_rows > seq_q pads each head) get LSE = +inf and delta = 0, so that a main kernel's P and
// dS are 0 there.
struct BackwardRows {
  float* lse;       // the forward's LSE copied into the padded rows; null: not copied
  float* delta;     // rowsum(dO * O)
  float* dq_accum;  // [B * Hq, stat_rows, D] fp32, zeroed; 16-byte aligned. flash keeps it in
                    // this order (stat_rows = seq_q), flash3 as 64-row tiles (Flash3DqTile)
  int64_t stat_rows;
};

// The fp32 dQ accumulator's offset in the workspace (fused_backward_workspace_floats): past two
// floats a padded row, so that it starts 256-byte aligned as the workspace does.
inline int64_t fused_backward_dq_offset(const AttentionShape& s) {
  return 2 * s.batch * s.heads * padded_stat_rows(s);
}

// delta = rowsum(dO * O) in fp32, the LSE copied (where rows.lse is set) and dQ's accumulator
// zeroed. cudaErrorInvalidValue for a head dim other than 64 and 128.
cudaError_t launch_backward_rows(const FusedBackward& b, const BackwardRows& rows);

// dQ = scale * dq_accum in b's dtype, into b.dq: the accumulator [B, Hq, Sq, D], as flash keeps it.
cudaError_t launch_backward_convert_dq(const FusedBackward& b, const float* dq_accum);

}  // namespace sdpa
