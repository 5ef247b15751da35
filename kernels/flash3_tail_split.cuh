// The last round of a persistent grid, split along the keys. With T tiles of equal work on G
// CTAs, the last round has T - (T-1)/G*G tiles, and while they run the other SMs wait (B8 H16
// S4096 D128 non-causal on 132 SMs: 4096 tiles, 31.03 rounds of work in 32 rounds of time).
// Each tile of that round becomes `splits` units, each over a contiguous range of its key
// blocks, so that the round's work spreads over the SMs: a unit leaves its unnormalised O and its
// rows' max and sum in a workspace, and the warp whose unit finishes last combines them and
// writes O. Causal tiles are ordered heaviest first, so their last round is already light: only
// non-causal forwards split.
#pragma once

#include <cmath>
#include <cstdint>

#include "flash3_tail_plan.h"
#include "mma_sm80.cuh"

namespace sdpa::flash3 {

// A row's log-sum-exp in exp2 units (P = exp2(s * scale_log2 - lse)) for a backward, from its raw
// maximum and its sum; +inf (P = 0) for a row that saw no key. Rows past seq_q are not written.
__device__ __forceinline__ void store_row_lse(float* lse, int64_t bh_q, int seq_q, int row,
                                              float row_max, float row_sum, float scale_log2) {
  if (row >= seq_q) return;
  lse[bh_q * seq_q + row] = row_sum > 0.f ? row_max * scale_log2 + __log2f(row_sum) : INFINITY;
}

// Every thread of a consumer warpgroup whose unit is part `slot` of a split tile (slots count
// from the first unit of the last round): its part of O (unnormalised), its rows' max (raw
// scores) and sum are left in the workspace; the warp whose part completes its tile combines the
// parts and writes its 16 rows of O. acc_o holds accumulator i of column 8(i/4) + 2t + i%2 of row
// row0 + 8((i/2)%2), the layout of an m64nD wgmma tile. The combining warp also writes the rows'
// log-sum-exp when `lse` is set.
template <typename T, int kConsumerWGs, int kOAcc>
__device__ __forceinline__ void finish_split_unit(const TailSplit& split, int slot, int cw, int tw,
                                                  float (&acc_o)[kOAcc], const float (&row_max)[2],
                                                  const float (&row_sum)[2], float scale_log2,
                                                  int64_t bh_q, int seq_q, int row0, int t,
                                                  float* lse) {
  constexpr int kVecs = kOAcc / 4;
  constexpr int kHeadDim = 2 * kOAcc;
  const int warp = tw / 32;
  const int lane = tw % 32;
  const auto part = [&](int s) { return s * kConsumerWGs + cw; };
#pragma unroll
  for (int q = 0; q < kVecs; ++q)
    __stcg(&split.partial_o[(part(slot) * kVecs + q) * 128 + tw],
           make_float4(acc_o[4 * q], acc_o[4 * q + 1], acc_o[4 * q + 2], acc_o[4 * q + 3]));
  __stcg(&split.stats[part(slot) * 128 + tw],
         make_float4(row_max[0], row_max[1], row_sum[0], row_sum[1]));
  __threadfence();  // the part is visible before the arrival that announces it
  __syncwarp();
  const int tile = slot / split.splits;
  unsigned* const arrivals = &split.arrivals[(tile * kConsumerWGs + cw) * 4 + warp];
  unsigned done = 0;
  if (lane == 0) done = atomicAdd(arrivals, 1u);
  done = __shfl_sync(0xffffffffu, done, 0);
  if (done != static_cast<unsigned>(split.splits - 1)) return;
  __threadfence();  // and read after it
  if (lane == 0) atomicExch(arrivals, 0u);  // zero again for the next launch

  float m[2] = {row_max[0], row_max[1]};
  float l[2] = {row_sum[0], row_sum[1]};
  const int first = tile * split.splits;
  for (int s = first; s < first + split.splits; ++s) {
    if (s == slot) continue;
    const float4 st = __ldcg(&split.stats[part(s) * 128 + tw]);
    const float their_max[2] = {st.x, st.y};
    const float their_sum[2] = {st.z, st.w};
    float mine[2];
    float theirs[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const float mx = fmaxf(m[half], their_max[half]);
      const float mx_scaled = mx == -INFINITY ? 0.f : mx * scale_log2;
      mine[half] = exp2f(m[half] * scale_log2 - mx_scaled);
      theirs[half] = exp2f(their_max[half] * scale_log2 - mx_scaled);
      m[half] = mx;
      l[half] = l[half] * mine[half] + their_sum[half] * theirs[half];
    }
#pragma unroll
    for (int q = 0; q < kVecs; ++q) {
      const float4 v = __ldcg(&split.partial_o[(part(s) * kVecs + q) * 128 + tw]);
      acc_o[4 * q] = acc_o[4 * q] * mine[0] + v.x * theirs[0];
      acc_o[4 * q + 1] = acc_o[4 * q + 1] * mine[0] + v.y * theirs[0];
      acc_o[4 * q + 2] = acc_o[4 * q + 2] * mine[1] + v.z * theirs[1];
      acc_o[4 * q + 3] = acc_o[4 * q + 3] * mine[1] + v.w * theirs[1];
    }
  }
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = row0 + 8 * half;
    if (lse != nullptr && t == 0)
      store_row_lse(lse, bh_q, seq_q, row, m[half], l[half], scale_log2);
    if (row >= seq_q) continue;
    const float inv = l[half] > 0.f ? 1.f / l[half] : 0.f;
    T* const out = static_cast<T*>(split.o) + (bh_q * seq_q + row) * kHeadDim + 2 * t;
#pragma unroll
    for (int j = 0; j < kHeadDim / 8; ++j)
      *reinterpret_cast<uint32_t*>(out + 8 * j) = sm80::pack2<T>(
          acc_o[4 * j + 2 * half] * inv, acc_o[4 * j + 2 * half + 1] * inv);
  }
}

}  // namespace sdpa::flash3
