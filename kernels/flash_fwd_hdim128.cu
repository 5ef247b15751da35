#include "flash_fwd_kernel.cuh"

namespace sdpa::flash {

template <>
cudaError_t launch_flash_forward_hdim<128>(DType t, const AttentionShape& shape, const void* q,
                                           const void* k, const void* v, void* o, cudaStream_t s) {
  return launch_flash_fwd<FlashFwdConfig<128>::Traits>(t, shape, q, k, v, o, s);
}

}  // namespace sdpa::flash
