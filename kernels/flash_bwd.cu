#include <cstdint>

#include "backward_rows.h"
#include "dispatch.cuh"
#include "dq_tile_convert.cuh"
#include "flash_bwd.h"
#include "flash_traits.cuh"

namespace sdpa {

cudaError_t launch_flash_backward(const FusedBackward& b) {
  // Without the forward's statistics or the workspace there is nothing to read or accumulate into;
  // the accumulator's 16-byte atomics need the workspace 16-byte aligned (cudaMalloc's is).
  if (b.lse == nullptr || b.workspace == nullptr ||
      reinterpret_cast<uintptr_t>(b.workspace) % 16 != 0)
    return cudaErrorInvalidValue;
  const AttentionShape& s = b.shape;
  // delta unpadded ([B, Hq, Sq], as the main kernel reads it, with the forward's LSE); the
  // accumulator where flash3's is, in whole tiles (as the main kernel pads a head's rows), which
  // the workspace's padded rows hold.
  const int64_t dq_rows = dq_tile_padded_rows(static_cast<int>(s.seq_q));
  if (dq_rows > padded_stat_rows(s)) return cudaErrorInvalidValue;
  const BackwardRows rows{.lse = nullptr,
                          .delta = b.workspace,
                          .dq_accum = b.workspace + fused_backward_dq_offset(s),
                          .stat_rows = s.seq_q,
                          .dq_rows = dq_rows};
  if (const cudaError_t err = launch_backward_rows(b, rows); err != cudaSuccess) return err;
  return dispatch_int(flash::FlashHeadDims{}, s.head_dim, cudaErrorInvalidValue, [&](auto d) {
    constexpr int kHeadDim = decltype(d)::value;
    const cudaError_t main = flash::launch_flash_backward_main<kHeadDim>(b, rows);
    return main != cudaSuccess ? main : flash::launch_flash_convert_dq<kHeadDim>(b, rows);
  });
}

int flash_backward_smem_bytes(int64_t head_dim) {
  return dispatch_int(flash::FlashHeadDims{}, head_dim, 0,
                      [](auto d) { return flash::backward_main_smem_bytes<decltype(d)::value>(); });
}

}  // namespace sdpa
