// The flash backward's main kernel and dQ conversion at head dim 128, in a translation unit of its
// own so the head dims compile in parallel.
#include "flash_bwd_kernel.cuh"

template cudaError_t sdpa::flash::launch_flash_backward_main<128>(const sdpa::FusedBackward&,
                                                                  const sdpa::BackwardRows&);
template cudaError_t sdpa::flash::launch_flash_convert_dq<128>(const sdpa::FusedBackward&,
                                                               const sdpa::BackwardRows&);
template int sdpa::flash::backward_main_smem_bytes<128>();
