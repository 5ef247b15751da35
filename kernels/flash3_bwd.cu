#include "backward_rows.h"
#include "dispatch.cuh"
#include "flash3_bwd.h"
#include "flash3_traits.cuh"

namespace sdpa {

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
  return launch_backward_convert_dq(b, rows.dq_accum);
}

}  // namespace sdpa
