// The flash forward kernel at head dim 128, in a translation unit of its own so the head dims
// compile in parallel.
#include "flash_fwd_kernel.cuh"

template cudaError_t sdpa::flash::launch_flash_forward_hdim<128>(const sdpa::FusedForward&);
