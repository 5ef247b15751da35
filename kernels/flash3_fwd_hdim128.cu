// The flash3 forward kernel at head dim 128, in a translation unit of its own so the head dims
// compile in parallel.
#include "flash3_fwd_kernel.cuh"

template cudaError_t sdpa::flash3::launch_flash3_forward_hdim<128>(const sdpa::FusedForward&);
