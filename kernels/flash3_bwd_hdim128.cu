// The flash3 backward's main kernel at head dim 128, in a translation unit of its own so the head
// dims compile in parallel.
#include "flash3_bwd_kernel.cuh"

template cudaError_t sdpa::flash3::launch_flash3_backward_main<128>(
    const sdpa::FusedBackward&, const sdpa::BackwardRows&);
