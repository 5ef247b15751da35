// The row pass before a fused backward's main kernel, shared by flash and flash3 (their dQ
// conversions: dq_tile_convert.cuh). It moves 16 bytes a lane: it is bandwidth-bound and, with 2-
// and 4-byte accesses, ran 10-25% behind cuDNN's (kernel-notes).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "fused_forward.h"

namespace sdpa {

// Where the row pass writes, all in b.workspace. LSE and delta are [B * Hq, stat_rows], the
// accumulator [B * Hq, dq_rows, D] (dq_rows >= stat_rows >= seq_q). Rows past seq_q get LSE = +inf
// and delta = 0, so that a main kernel's P and dS are 0 there.
struct BackwardRows {
  float* lse;       // the forward's LSE copied into the padded rows; null: not copied
  float* delta;     // rowsum(dO * O)
  float* dq_accum;  // fp32, zeroed; 16-byte aligned. Both backwards keep it as 64-row tiles
                    // (dq_tile_convert.cuh)
  int64_t stat_rows;
  int64_t dq_rows;
};

// The fp32 dQ accumulator's offset in the workspace (fused_backward_workspace_floats): past two
// floats a padded row, so that it starts 256-byte aligned as the workspace does.
inline int64_t fused_backward_dq_offset(const AttentionShape& s) {
  return 2 * s.batch * s.heads * padded_stat_rows(s);
}

// delta = rowsum(dO * O) in fp32, the LSE copied (where rows.lse is set) and dQ's accumulator
// zeroed. cudaErrorInvalidValue for a head dim other than 64 and 128.
cudaError_t launch_backward_rows(const FusedBackward& b, const BackwardRows& rows);

}  // namespace sdpa
