#include "backward_rows.h"
#include "device_math.cuh"
#include "dispatch.cuh"
#include "flash3_bwd.h"
#include "flash3_bwd_traits.cuh"
#include "flash3_traits.cuh"
#include "mma_sm80.cuh"

namespace sdpa {
namespace {

// dQ = scale * the accumulator's tiles (Flash3DqTile) in the dtype, rows past seq_q left out. A
// thread takes one 16-byte piece, read coalesced, and writes its two rows' column pairs. Not named
// flash*: the profile would count it as the fused kernel (categorize_kernel).
template <typename T, int kHeadDim>
__global__ void backward_convert_dq_tiles_kernel(const float* dq_accum, T* dq, int64_t pieces,
                                                 int m_blocks, int seq_q, float scale) {
  using Tile = flash3::Flash3DqTile<kHeadDim>;
  for (int64_t i = device::global_thread_index(); i < pieces; i += device::grid_stride()) {
    const int64_t tile = i / Tile::kPieces;
    const int piece = static_cast<int>(i % Tile::kPieces);
    const int64_t head = tile / m_blocks;
    const int row = static_cast<int>(tile % m_blocks) * Tile::kRows + Tile::row(piece);
    const float4 v = reinterpret_cast<const float4*>(dq_accum)[i];
    uint32_t* const out =
        reinterpret_cast<uint32_t*>(dq + (head * seq_q + row) * kHeadDim + Tile::col(piece));
    if (row < seq_q) out[0] = sm80::pack2<T>(v.x * scale, v.y * scale);
    if (row + 8 < seq_q) out[8 * kHeadDim / 2] = sm80::pack2<T>(v.z * scale, v.w * scale);
  }
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
                          .stat_rows = stat_rows};
  if (const cudaError_t err = launch_backward_rows(b, rows); err != cudaSuccess) return err;
  const cudaError_t main = dispatch_int(
      flash3::Flash3HeadDims{}, s.head_dim, cudaErrorInvalidValue,
      [&](auto d) { return flash3::launch_flash3_backward_main<decltype(d)::value>(b, rows); });
  if (main != cudaSuccess) return main;
  return launch_flash3_convert_dq(b, rows);
}

}  // namespace sdpa
