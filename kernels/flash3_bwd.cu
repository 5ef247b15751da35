#include <cmath>

#include "device_math.cuh"
#include "dispatch.cuh"
#include "flash3_bwd.h"
#include "flash3_traits.cuh"
#include "flash_bwd.h"

namespace sdpa {
namespace {

using device::to_float;
using device::warp_sum;

// One warp per padded row of [B * Hq, stat_rows]: delta = rowsum(dO * O) and the forward's LSE
// copied there, and the row's dQ accumulator zeroed; rows past seq_q get LSE = +inf and
// delta = 0, so that the main kernel's P and dS are 0 on them. A lane reads pairs of columns.
template <typename T>
__global__ void flash3_bwd_preprocess_kernel(const T* d_out, const T* o, const float* lse,
                                             float* lse_padded, float* delta_padded,
                                             float* dq_accum, int64_t padded_rows, int stat_rows,
                                             int seq_q, int head_dim) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (row >= padded_rows) return;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t head = row / stat_rows;
  const int m = static_cast<int>(row % stat_rows);
  if (m >= seq_q) {
    if (lane == 0) {
      lse_padded[row] = INFINITY;
      delta_padded[row] = 0.f;
    }
    return;
  }
  const int64_t src = head * seq_q + m;
  float acc = 0.f;
  for (int d = 2 * lane; d < head_dim; d += 64) {
    const int64_t i = src * head_dim + d;
    acc += to_float(d_out[i]) * to_float(o[i]) + to_float(d_out[i + 1]) * to_float(o[i + 1]);
    *reinterpret_cast<float2*>(dq_accum + i) = make_float2(0.f, 0.f);
  }
  acc = warp_sum(acc);
  if (lane == 0) {
    delta_padded[row] = acc;
    lse_padded[row] = lse[src];
  }
}

constexpr int kRowsPerBlock = 8;  // warps per preprocess block

}  // namespace

cudaError_t launch_flash3_backward(const FusedBackward& b) {
  // Without the forward's statistics or the workspace there is nothing to read or accumulate into.
  if (b.lse == nullptr || b.workspace == nullptr) return cudaErrorInvalidValue;
  const AttentionShape& s = b.shape;
  const int64_t stat_rows = padded_stat_rows(s);
  const int64_t padded_rows = s.batch * s.heads * stat_rows;
  // The workspace (fused_backward_workspace_floats): LSE and delta padded, then dQ's accumulator.
  const flash3::Flash3BwdRows rows{.lse = b.workspace,
                                   .delta = b.workspace + padded_rows,
                                   .dq_accum = b.workspace + 2 * padded_rows,
                                   .stat_rows = stat_rows};
  return dispatch_dtype(b.dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    flash3_bwd_preprocess_kernel<T>
        <<<static_cast<unsigned>((padded_rows + kRowsPerBlock - 1) / kRowsPerBlock),
           kRowsPerBlock * 32, 0, b.stream>>>(
            static_cast<const T*>(b.d_out), static_cast<const T*>(b.o), b.lse, b.workspace,
            b.workspace + padded_rows, rows.dq_accum, padded_rows, static_cast<int>(stat_rows),
            static_cast<int>(s.seq_q), static_cast<int>(s.head_dim));
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
    const cudaError_t main = dispatch_int(
        flash3::Flash3HeadDims{}, s.head_dim, cudaErrorInvalidValue,
        [&](auto d) { return flash3::launch_flash3_backward_main<decltype(d)::value>(b, rows); });
    if (main != cudaSuccess) return main;
    return launch_flash_backward_convert_dq(b, rows.dq_accum);
  });
}

}  // namespace sdpa
