#include "backward_rows.h"
#include "device_math.cuh"
#include "dispatch.cuh"
#include "dq_tile_convert.cuh"
#include "flash3_bwd.h"
#include "flash3_bwd_traits.cuh"
#include "flash3_traits.cuh"
#include "mma_sm80.cuh"

namespace sdpa {
namespace {

// dQ = scale * the accumulator's tiles (Flash3DqTile) in the dtype, a thread a 16-byte piece
// (dq_tile_convert.cuh). Not named flash*: the profile would count it as the fused kernel
// (categorize_kernel).
template <typename T, int kHeadDim>
__global__ void backward_convert_dq_tiles_kernel(const float* dq_accum, T* dq, int64_t pieces,
                                                 int m_blocks, int seq_q, float scale) {
  for (int64_t i = device::global_thread_index(); i < pieces; i += device::grid_stride())
    convert_dq_tile_piece<T, flash3::Flash3DqTile<kHeadDim>, kHeadDim>(dq_accum, dq, i, m_blocks,
                                                                        seq_q, scale);
}

cudaError_t launch_flash3_convert_dq(const FusedBackward& b, const BackwardRows& rows) {
  const AttentionShape& s = b.shape;
  return dispatch_dtype(b.dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    return dispatch_int(flash3::Flash3HeadDims{}, s.head_dim, cudaErrorInvalidValue, [&](auto d) {
      constexpr int kHeadDim = decltype(d)::value;
      using Tile = flash3::Flash3DqTile<kHeadDim>;
      const int64_t m_blocks = rows.stat_rows / Tile::kRows;
      const int64_t pieces = s.batch * s.heads * m_blocks * Tile::kPieces;
      backward_convert_dq_tiles_kernel<T, kHeadDim>
          <<<elementwise_grid(pieces), kElementwiseBlock, 0, b.stream>>>(
              rows.dq_accum, static_cast<T*>(b.dq), pieces, static_cast<int>(m_blocks),
              static_cast<int>(s.seq_q), s.scale);
      return cudaGetLastError();
    });
  });
}

}  // namespace

cudaError_t launch_flash3_backward(const FusedBackward& b) {
  // Without the forward's statistics or the workspace there is nothing to read or accumulate into.
  if (b.lse == nullptr || b.workspace == nullptr) return cudaErrorInvalidValue;
  const AttentionShape& s = b.shape;
  const int64_t stat_rows = padded_stat_rows(s);
  const int64_t padded_rows = s.batch * s.heads * stat_rows;
  // The workspace (fused_backward_workspace_floats): LSE and delta padded, then dQ's accumulator.
  const BackwardRows rows{.lse = b.workspace,
                          .delta = b.workspace + padded_rows,
                          .dq_accum = b.workspace + fused_backward_dq_offset(s),
                          .stat_rows = stat_rows,
                          .dq_rows = stat_rows};
  if (const cudaError_t err = launch_backward_rows(b, rows); err != cudaSuccess) return err;
  const cudaError_t main = dispatch_int(
      flash3::Flash3HeadDims{}, s.head_dim, cudaErrorInvalidValue,
      [&](auto d) { return flash3::launch_flash3_backward_main<decltype(d)::value>(b, rows); });
  if (main != cudaSuccess) return main;
  return launch_flash3_convert_dq(b, rows);
}

}  // namespace sdpa
