// The last step of a fused backward: dQ = scale * the fp32 accumulator, in the dtype. Both fused
// backwards keep the accumulator as [B * Hq, 64-row query blocks] of tiles in the order their main
// kernels' threads hold dQ, so that those add 16 bytes a lane, a warp's lanes side by side: a
// 16-byte piece is one thread's m16n8 accumulator quad, (row, col), (row, col + 1), (row + 8, col)
// and (row + 8, col + 1) of its tile. Tile::row(piece) and Tile::col(piece) place a piece.
#pragma once

#include <cstdint>

#include "mma_sm80.cuh"

namespace sdpa {

inline constexpr int kDqTileRows = 64;

// A head's rows of a tiled accumulator: seq_q rounded up to whole tiles.
__host__ __device__ constexpr int dq_tile_padded_rows(int seq_q) {
  return (seq_q + kDqTileRows - 1) & -kDqTileRows;
}

// Piece `i` of the accumulator into dq ([B, Hq, Sq, kHeadDim]); rows past seq_q are left out.
template <typename T, typename Tile, int kHeadDim>
__device__ __forceinline__ void convert_dq_tile_piece(const float* dq_accum, T* dq, int64_t i,
                                                      int m_blocks, int seq_q, float scale) {
  static_assert(Tile::kRows == kDqTileRows && Tile::kPieces == kDqTileRows * kHeadDim / 4);
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

}  // namespace sdpa
