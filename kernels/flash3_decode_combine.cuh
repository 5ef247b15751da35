// The end of a flash3 decode CTA (flash3_decode_kernel.cuh): its four warps' parts merged in shared
// memory into the CTA's rows of O, or into its split's part in the workspace; and, in the CTA whose
// part completes its unit, every split's part merged into O. All of it runs once the K/V stages
// have drained, in their shared memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>

#include "flash3_decode_plan.h"
#include "mma_sm80.cuh"

namespace sdpa::flash3 {

// Shared memory after the main loop (DecodeCombineLayout, flash3_decode_plan.h), as pointers.
template <typename P>
__device__ __forceinline__ P* combine_at(unsigned char* smem, int offset) {
  return reinterpret_cast<P*>(smem + offset);
}

template <typename T>
__device__ __forceinline__ void store4(T* out, float a, float b, float c, float d) {
  *reinterpret_cast<uint2*>(out) = make_uint2(sm80::pack2<T>(a, b), sm80::pack2<T>(c, d));
}

// A warp's part: its O (unscaled; accumulator (mt, nt, e) is row mt*16 + g + (e/2)*8, column
// nt*8 + 2t + e%2) and its rows' max (raw scores) and sum, as the quad's lanes hold them.
template <int kHeadDim, int kMTiles>
__device__ __forceinline__ void stage_warp_part(unsigned char* smem,
                                                const float (&acc_o)[kMTiles][kHeadDim / 8][4],
                                                const float (&row_max)[kMTiles][2],
                                                const float (&row_sum)[kMTiles][2], int warp, int g,
                                                int t) {
  using Smem = DecodeCombineLayout<kHeadDim>;
  constexpr int kRows = 16 * kMTiles;
  float* const s_o = combine_at<float>(smem, Smem::kO);
  float2* const s_stats = combine_at<float2>(smem, Smem::kStats);
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = mt * 16 + g + half * 8;
      float sum = row_sum[mt][half];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      if (t == 0) s_stats[warp * kRows + row] = make_float2(row_max[mt][half], sum);
      float* const out = s_o + (warp * kRows + row) * Smem::kORowFloats + 2 * t;
#pragma unroll
      for (int nt = 0; nt < kHeadDim / 8; ++nt)
        *reinterpret_cast<float2*>(out + nt * 8) =
            make_float2(acc_o[mt][nt][2 * half], acc_o[mt][nt][2 * half + 1]);
    }
}

// The warps' parts (staged, and a barrier passed) merged row by row: into O (`o`: the CTA's first
// row) when the keys are not split, else into part `part` of the workspace with its rows'
// log2-sum-exp2.
template <typename T, int kHeadDim, int kRows>
__device__ __forceinline__ void merge_warp_parts(unsigned char* smem, const DecodeParams& p, T* o,
                                                 int64_t part, int valid_rows) {
  using Smem = DecodeCombineLayout<kHeadDim>;
  constexpr int D = kHeadDim;
  const int tid = static_cast<int>(threadIdx.x);
  const float* const s_o = combine_at<float>(smem, Smem::kO);
  const float2* const s_stats = combine_at<float2>(smem, Smem::kStats);
  float* const s_factor = combine_at<float>(smem, Smem::kFactor);
  float* const s_lse = combine_at<float>(smem, Smem::kLse);
  // Per row: each warp's weight in the CTA's normalised O, and the row's log2-sum-exp2.
  if (tid < kRows) {
    float mx = -INFINITY;
#pragma unroll
    for (int w = 0; w < kDecodeWarps; ++w) mx = fmaxf(mx, s_stats[w * kRows + tid].x);
    const float mx_scaled = mx == -INFINITY ? 0.f : mx * p.scale_log2;
    float factor[kDecodeWarps];
    float sum = 0.f;
#pragma unroll
    for (int w = 0; w < kDecodeWarps; ++w) {
      const float2 st = s_stats[w * kRows + tid];
      factor[w] = exp2f(st.x * p.scale_log2 - mx_scaled);
      sum += st.y * factor[w];
    }
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
#pragma unroll
    for (int w = 0; w < kDecodeWarps; ++w) s_factor[w * kRows + tid] = factor[w] * inv;
    s_lse[tid] = sum > 0.f ? mx_scaled + log2f(sum) : -INFINITY;
  }
  __syncthreads();

  constexpr int kVecsPerRow = D / 4;
  for (int i = tid; i < kRows * kVecsPerRow; i += kDecodeThreads) {
    const int row = i / kVecsPerRow;
    const int col = (i % kVecsPerRow) * 4;
    if (row >= valid_rows) break;  // rows run in order: the rest are past the group's end too
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int w = 0; w < kDecodeWarps; ++w) {
      const float f = s_factor[w * kRows + row];
      const float4 x =
          *reinterpret_cast<const float4*>(s_o + (w * kRows + row) * Smem::kORowFloats + col);
      acc = make_float4(acc.x + f * x.x, acc.y + f * x.y, acc.z + f * x.z, acc.w + f * x.w);
    }
    if (p.splits == 1)
      store4<T>(o + row * D + col, acc.x, acc.y, acc.z, acc.w);
    else
      __stcg(reinterpret_cast<float4*>(p.parts.partial_o + (part * kDecodeMaxRows + row) * D + col),
             acc);
  }
  if (p.splits > 1 && tid < valid_rows)
    __stcg(p.parts.lse + part * kDecodeMaxRows + tid, s_lse[tid]);
}

// Column `col` of `row` of O from a unit's split parts s = first, first + stride, ...: their
// partial O weighted by the row's `weights` (normalised over the unit's splits). Eight loads in
// flight at a time: they are L2 round trips on the critical path of the unit's last CTA.
template <int kHeadDim>
__device__ __forceinline__ float4 weighted_parts(const DecodeParams& p, const float* weights,
                                                 int64_t first_part, int row, int col, int first,
                                                 int stride) {
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 8
  for (int s = first; s < p.splits; s += stride) {
    const float w = weights[s];
    const float4 x = __ldcg(reinterpret_cast<const float4*>(
        p.parts.partial_o + ((first_part + s) * kDecodeMaxRows + row) * kHeadDim + col));
    acc = make_float4(acc.x + w * x.x, acc.y + w * x.y, acc.z + w * x.z, acc.w + w * x.w);
  }
  return acc;
}

// After merge_warp_parts of a split unit: the CTA whose part completes its unit (counted in the
// workspace, and the count set back to zero for the next launch) merges every split's part into
// O; the others return. Every step spreads over all the CTA's threads: one thread a row walking
// the splits one load after another made this tail about 10% of a B1 decode (ncu: 17 K of 183 K
// cycles at D64 B1 H8/8 Skv131072).
// kMaxSplits: the most parts the kernel's drained stages hold the weights of (its traits').
template <typename T, int kHeadDim, int kMaxSplits>
__device__ __forceinline__ void combine_splits_if_last(unsigned char* smem, const DecodeParams& p,
                                                       T* o, int64_t unit, int valid_rows) {
  using Smem = DecodeCombineLayout<kHeadDim>;
  constexpr int D = kHeadDim;
  const int tid = static_cast<int>(threadIdx.x);
  constexpr int kWeightStride = Smem::weight_stride(kMaxSplits);
  float* const s_weight = combine_at<float>(smem, Smem::kWeight);  // [row][kWeightStride]
  int* const s_last = combine_at<int>(smem, Smem::last(kMaxSplits));
  __threadfence();  // the part is visible before the arrival that announces it
  __syncthreads();
  if (tid == 0) {
    const unsigned done = atomicAdd(&p.parts.arrivals[unit], 1u);
    *s_last = done == static_cast<unsigned>(p.splits - 1);
    if (*s_last) atomicExch(&p.parts.arrivals[unit], 0u);
  }
  __syncthreads();
  if (!*s_last) return;
  __threadfence();  // and read after it
  const int64_t first_part = unit * p.splits;

  // Every split's log2-sum-exp2 of every valid row, all loads at once.
  for (int i = tid; i < p.splits * valid_rows; i += kDecodeThreads) {
    const int s = i / valid_rows;
    const int row = i % valid_rows;
    s_weight[row * kWeightStride + s] =
        __ldcg(p.parts.lse + (first_part + s) * kDecodeMaxRows + row);
  }
  __syncthreads();
  // Each row's weights, normalised over its splits, every row at once: a group of `lanes` lanes a
  // row (as many as the rows leave the CTA, a warp at most), strided over the splits. A warp a
  // row, row after row, cost 32 rows of few splits (Sq 4 at H64/8) up to 7% of a B1 decode.
  int lanes = 32;
  while (lanes * valid_rows > kDecodeThreads) lanes /= 2;
  {
    const int row = tid / lanes;
    const int splits = row < valid_rows ? p.splits : 0;  // every lane takes part in the shuffles
    float* const weights = s_weight + row * kWeightStride;
    float mx = -INFINITY;
    for (int s = tid % lanes; s < splits; s += lanes) mx = fmaxf(mx, weights[s]);
    for (int offset = lanes / 2; offset > 0; offset /= 2)
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, offset));
    float sum = 0.f;
    for (int s = tid % lanes; s < splits; s += lanes) {
      float& w = weights[s];
      w = mx == -INFINITY ? 0.f : exp2f(w - mx);
      sum += w;
    }
    for (int offset = lanes / 2; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    for (int s = tid % lanes; s < splits; s += lanes) weights[s] *= inv;
  }
  __syncthreads();

  // O: each float4 column of the valid rows, its splits dealt over `slices` threads where the
  // columns leave threads idle, their sums then added in the warps' drained O staging.
  constexpr int kVecsPerRow = D / 4;
  const int row_vecs = valid_rows * kVecsPerRow;
  const int slices = max(1, kDecodeThreads / row_vecs);
  if (slices == 1) {
    for (int i = tid; i < row_vecs; i += kDecodeThreads) {
      const int row = i / kVecsPerRow;
      const int col = (i % kVecsPerRow) * 4;
      const float4 acc =
          weighted_parts<D>(p, s_weight + row * kWeightStride, first_part, row, col, 0, 1);
      store4<T>(o + row * D + col, acc.x, acc.y, acc.z, acc.w);
    }
    return;
  }
  static_assert(Smem::kStats - Smem::kO >= kDecodeThreads * 16, "a float4 a thread");
  float4* const s_sums = combine_at<float4>(smem, Smem::kO);  // [slice][row_vec]
  if (tid < slices * row_vecs) {
    const int row = (tid % row_vecs) / kVecsPerRow;
    s_sums[tid] = weighted_parts<D>(p, s_weight + row * kWeightStride, first_part, row,
                                    (tid % kVecsPerRow) * 4, tid / row_vecs, slices);
  }
  __syncthreads();
  if (tid < row_vecs) {
    float4 acc = s_sums[tid];
    for (int slice = 1; slice < slices; ++slice) {
      const float4 x = s_sums[slice * row_vecs + tid];
      acc = make_float4(acc.x + x.x, acc.y + x.y, acc.z + x.z, acc.w + x.w);
    }
    const int row = tid / kVecsPerRow;
    const int col = (tid % kVecsPerRow) * 4;
    store4<T>(o + row * D + col, acc.x, acc.y, acc.z, acc.w);
  }
}

}  // namespace sdpa::flash3
