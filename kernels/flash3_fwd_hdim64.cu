// The flash3 forward kernel at head dim 64, in a translation unit of its own so the head dims
// compile in parallel.
#include "flash3_fwd_kernel.cuh"

namespace sdpa::flash3 {
template cudaError_t launch_flash3_forward_hdim<64, Flash3Schedule::serial>(const FusedForward&);
template cudaError_t launch_flash3_forward_hdim<64, Flash3Schedule::overlap>(const FusedForward&);
template cudaError_t launch_flash3_forward_hdim<64, Flash3Schedule::pingpong>(const FusedForward&);
}  // namespace sdpa::flash3
