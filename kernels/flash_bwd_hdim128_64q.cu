// The flash backward's main kernel at head dim 128 with 64-query steps (the variant bwd-64q), in a
// translation unit of its own so it compiles beside the default ones.
#include "flash_bwd_kernel.cuh"

namespace sdpa::flash {

cudaError_t launch_flash_backward_main_d128_64q(const FusedBackward& b, const float* delta,
                                                float* dq_accum) {
  return launch_flash_backward_traits<FlashBwdD128Q64>(b, delta, dq_accum);
}

}  // namespace sdpa::flash
