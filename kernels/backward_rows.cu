#include <cmath>

#include "backward_rows.h"
#include "device_math.cuh"
#include "dispatch.cuh"

namespace sdpa {
namespace {

using device::from_float;
using device::Pack;
using device::to_float;

constexpr int kRowPassBlock = 256;

// A row is kHeadDim / 8 adjacent lanes, each reading 8 elements (16 bytes) of dO and of O and
// zeroing 8 floats of the accumulator (D floats a padded row, whatever order its user keeps); a
// warp takes 256 / kHeadDim rows. Every lane of a warp reaches the shuffles, past the last row too,
// so that their full mask holds.
template <typename T, int kHeadDim>
__global__ void __launch_bounds__(kRowPassBlock)
    backward_rows_kernel(const T* d_out, const T* o, const float* lse, BackwardRows out,
                         int64_t padded_rows, int seq_q) {
  constexpr int kLanes = kHeadDim / 8;
  static_assert(kLanes >= 1 && kLanes <= 32 && 32 % kLanes == 0);
  using P = Pack<T>;
  static_assert(P::size == 8);
  const int64_t thread = device::global_thread_index();
  const int64_t row = thread / kLanes;
  const int part = static_cast<int>(thread % kLanes);
  const int64_t head = row / out.stat_rows;
  const int m = static_cast<int>(row % out.stat_rows);
  const bool real = row < padded_rows && m < seq_q;
  const int64_t src = head * seq_q + m;
  float acc = 0.f;
  if (real) {
    const int64_t i = src * kHeadDim + part * P::size;
    const P d = *reinterpret_cast<const P*>(d_out + i);
    const P v = *reinterpret_cast<const P*>(o + i);
#pragma unroll
    for (int k = 0; k < P::size; ++k) acc += to_float(d.v[k]) * to_float(v.v[k]);
  }
  if (row < padded_rows) {
    float4* zero = reinterpret_cast<float4*>(out.dq_accum + row * kHeadDim + part * P::size);
    zero[0] = make_float4(0.f, 0.f, 0.f, 0.f);
    zero[1] = make_float4(0.f, 0.f, 0.f, 0.f);
  }
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2)
    acc += __shfl_xor_sync(0xffffffffu, acc, offset);
  if (part != 0 || row >= padded_rows) return;
  out.delta[row] = real ? acc : 0.f;
  if (out.lse != nullptr) out.lse[row] = real ? lse[src] : INFINITY;
}

// 8 elements a thread: two 16-byte loads of the accumulator, one 16-byte store.
template <typename T>
__global__ void backward_convert_dq_kernel(const float* dq_accum, T* dq, int64_t packs, float scale) {
  using P = Pack<T>;
  for (int64_t i = device::global_thread_index(); i < packs; i += device::grid_stride()) {
    const float4 lo = reinterpret_cast<const float4*>(dq_accum)[2 * i];
    const float4 hi = reinterpret_cast<const float4*>(dq_accum)[2 * i + 1];
    const float f[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    P p;
#pragma unroll
    for (int k = 0; k < P::size; ++k) p.v[k] = from_float<T>(f[k] * scale);
    reinterpret_cast<P*>(dq)[i] = p;
  }
}

using BackwardRowHeadDims = IntList<64, 128>;

}  // namespace

cudaError_t launch_backward_rows(const FusedBackward& b, const BackwardRows& rows) {
  const AttentionShape& s = b.shape;
  const int64_t padded_rows = s.batch * s.heads * rows.stat_rows;
  return dispatch_dtype(b.dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    return dispatch_int(BackwardRowHeadDims{}, s.head_dim, cudaErrorInvalidValue, [&](auto d) {
      constexpr int kHeadDim = decltype(d)::value;
      constexpr int64_t kRowsPerBlock = kRowPassBlock / (kHeadDim / 8);
      backward_rows_kernel<T, kHeadDim>
          <<<static_cast<unsigned>((padded_rows + kRowsPerBlock - 1) / kRowsPerBlock),
             kRowPassBlock, 0, b.stream>>>(static_cast<const T*>(b.d_out),
                                           static_cast<const T*>(b.o), b.lse, rows, padded_rows,
                                           static_cast<int>(s.seq_q));
      return cudaGetLastError();
    });
  });
}

cudaError_t launch_backward_convert_dq(const FusedBackward& b, const float* dq_accum) {
  const AttentionShape& s = b.shape;
  if (s.head_dim % 8 != 0) return cudaErrorInvalidValue;
  const int64_t packs = s.batch * s.heads * s.seq_q * s.head_dim / 8;
  return dispatch_dtype(b.dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    backward_convert_dq_kernel<T><<<elementwise_grid(packs), kElementwiseBlock, 0, b.stream>>>(
        dq_accum, static_cast<T*>(b.dq), packs, s.scale);
    return cudaGetLastError();
  });
}

}  // namespace sdpa
