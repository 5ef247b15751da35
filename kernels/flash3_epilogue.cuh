// The flash3 epilogue of a consumer warpgroup's unit: the rows' sums gathered across their quad,
// then O normalised, staged in the warpgroup's rows of the O tile (once the previous unit's store
// has read them) in the swizzled layout of the O map, and written by one TMA store per column
// block; rows past seq_q fall outside the map and are not written. A part of a split tile goes
// to the workspace instead, and the last part's warps write O (flash3_tail_split.cuh).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "flash3_consumer_rows.cuh"
#include "flash3_smem.cuh"
#include "flash3_tail_split.cuh"

namespace sdpa::flash3 {

template <typename Traits, typename T, bool kCausal>
struct Flash3Epilogue {
  using Rows = ConsumerRows<Traits, T, kCausal>;
  static constexpr int D = Traits::kHeadDim;

  const Flash3Smem<Traits>& smem;
  const CUtensorMap* map_o;
  // [B, Hq, Sq], exp2 units, when a backward follows (FusedForward::lse); else null.
  float* lse;
  int cw;    // the consumer warpgroup
  int tw;    // the thread within it
  int warp;  // the warp within it
  int g;     // accumulator row within the warp's 16 (and g + 8)
  int t;     // accumulator column pair

  // `split_slot` >= 0: the unit is that part of a split tile.
  __device__ __forceinline__ void store(const Rows& rows, float (&acc_o)[Rows::kOAcc],
                                        int tile_count, int bh_q, int split_slot,
                                        const TailSplit& split, int seq_q) const {
    float row_sum[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float sum = rows.row_sum[half];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      row_sum[half] = sum;
    }
    if constexpr (!kCausal) {
      if (split_slot >= 0) {
        finish_split_unit<T, Traits::kConsumerWGs>(split, split_slot, cw, tw, acc_o, rows.row_max,
                                                   row_sum, rows.scale_log2, bh_q, seq_q, rows.row0,
                                                   t, lse);
        return;
      }
    }
    if (lse != nullptr && t == 0) {
#pragma unroll
      for (int half = 0; half < 2; ++half)
        store_row_lse(lse, bh_q, seq_q, rows.row0 + 8 * half, rows.row_max[half], row_sum[half],
                      rows.scale_log2);
    }
    const uint32_t o_wg = smem.o + cw * Traits::kWGRows * 128;
    float inv[2];
#pragma unroll
    for (int half = 0; half < 2; ++half)
      inv[half] = row_sum[half] > 0.f ? 1.f / row_sum[half] : 0.f;
    if (tile_count > 0) {
      if (tw == 0) tma_store_wait_read();
      named_barrier_sync(1 + cw, 128);
    }
    // With three consumers the staging addresses, hoisted out of the tile loop, were spilled
    // across it once the split's combine was there too: they are made anew for each tile.
    int g_o = g;
    int t_o = t;
    if constexpr (Traits::kConsumerWGs == 3) {
      const int lane_o = static_cast<int>(lane_id_here());
      g_o = lane_o / 4;
      t_o = lane_o % 4;
    }
#pragma unroll
    for (int j = 0; j < D / 8; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = warp * 16 + g_o + half * 8;  // row % 8 == g
        const uint32_t addr = o_wg + swizzled_pair_offset(j, row, g_o, t_o, Rows::kQColBytes);
        store_shared_u32(addr, pack2<T>(acc_o[4 * j + 2 * half] * inv[half],
                                        acc_o[4 * j + 2 * half + 1] * inv[half]));
      }
    fence_async_shared();
    named_barrier_sync(1 + cw, 128);
    if (tw == 0 && rows.wg_row0 < seq_q) {
#pragma unroll
      for (int c = 0; c < Traits::kColBlocks; ++c)
        tma_store_3d(map_o, o_wg + c * Rows::kQColBytes, c * 64, rows.wg_row0, bh_q);
      tma_store_commit();
    }
  }

  // After the last unit: the staging rows stay valid until the store has read them.
  __device__ __forceinline__ void drain() const {
    if (tw == 0) tma_store_wait_read();
  }
};

}  // namespace sdpa::flash3
