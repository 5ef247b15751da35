#include "backward_rows.h"
#include "dispatch.cuh"
#include "flash_bwd.h"
#include "flash_traits.cuh"

namespace sdpa {

cudaError_t launch_flash_backward(const FusedBackward& b) {
  // Without the forward's statistics or the workspace there is nothing to read or accumulate into.
  if (b.lse == nullptr || b.workspace == nullptr) return cudaErrorInvalidValue;
  const AttentionShape& s = b.shape;
  // delta unpadded ([B, Hq, Sq], as the main kernel reads it); the accumulator where flash3's is.
  const BackwardRows rows{.lse = nullptr,
                          .delta = b.workspace,
                          .dq_accum = b.workspace + fused_backward_dq_offset(s),
                          .stat_rows = s.seq_q};
  if (const cudaError_t err = launch_backward_rows(b, rows); err != cudaSuccess) return err;
  const cudaError_t main = dispatch_int(flash::FlashHeadDims{}, s.head_dim, cudaErrorInvalidValue, [&](auto d) {
    return flash::launch_flash_backward_main<decltype(d)::value>(b, rows.delta, rows.dq_accum);
  });
  if (main != cudaSuccess) return main;
  return launch_backward_convert_dq(b, rows.dq_accum);
}

int flash_backward_smem_bytes(int64_t head_dim) {
  return dispatch_int(flash::FlashHeadDims{}, head_dim, 0,
                      [](auto d) { return flash::backward_main_smem_bytes<decltype(d)::value>(); });
}

}  // namespace sdpa
