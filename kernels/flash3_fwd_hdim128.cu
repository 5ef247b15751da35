// The flash3 forward kernel at head dim 128, every schedule, in a translation unit of its own so
// the head dims compile in parallel.
#include "flash3_fwd_kernel.cuh"

namespace sdpa::flash3 {
template cudaError_t launch_flash3_forward_hdim<128, Flash3Schedule::serial, false>(
    const FusedForward&);
template cudaError_t launch_flash3_forward_hdim<128, Flash3Schedule::serial, true>(
    const FusedForward&);
template cudaError_t launch_flash3_forward_hdim<128, Flash3Schedule::overlap, false>(
    const FusedForward&);
template cudaError_t launch_flash3_forward_hdim<128, Flash3Schedule::overlap, true>(
    const FusedForward&);
template cudaError_t launch_flash3_forward_hdim<128, Flash3Schedule::pingpong, false>(
    const FusedForward&);
template cudaError_t launch_flash3_forward_hdim<128, Flash3Schedule::pingpong, true>(
    const FusedForward&);
}  // namespace sdpa::flash3
