// The flash3 decode kernel at head dim 64 (both dtypes, one and two m16 tiles of packed rows), in
// a translation unit of its own so the head dims compile in parallel.
#include "flash3_decode_kernel.cuh"

template cudaError_t sdpa::flash3::launch_flash3_decode_hdim<64>(const sdpa::FusedForward&,
                                                                 const sdpa::flash3::DecodePlan&);
