#include <cmath>

#include "backward_rows.h"
#include "device_math.cuh"
#include "dispatch.cuh"

namespace sdpa {
namespace {

using device::Pack;
using device::to_float;

constexpr int kRowPassBlock = 256;

// A row (of the accumulator's, the longest) is kHeadDim / 8 adjacent lanes, each reading 8
// elements (16 bytes) of dO and of O and zeroing 8 floats of the accumulator (D floats a padded
// row, whatever order its user keeps); a warp takes 256 / kHeadDim rows. Every lane of a warp
// reaches the shuffles, past the last row too, so that their full mask holds.
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
  const int64_t head = row / out.dq_rows;
  const int m = static_cast<int>(row % out.dq_rows);
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
  if (part != 0 || row >= padded_rows || m >= out.stat_rows) return;
  const int64_t stat = head * out.stat_rows + m;
  out.delta[stat] = real ? acc : 0.f;
  if (out.lse != nullptr) out.lse[stat] = real ? lse[src] : INFINITY;
}

using BackwardRowHeadDims = IntList<64, 128>;

}  // namespace

cudaError_t launch_backward_rows(const FusedBackward& b, const BackwardRows& rows) {
  const AttentionShape& s = b.shape;
  if (rows.stat_rows < s.seq_q || rows.dq_rows < rows.stat_rows) return cudaErrorInvalidValue;
  const int64_t padded_rows = s.batch * s.heads * rows.dq_rows;
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

}  // namespace sdpa
