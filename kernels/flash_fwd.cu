#include "flash_fwd.h"
#include "flash_traits.cuh"

namespace sdpa {

bool flash_forward_supports_head_dim(int64_t head_dim) {
  return head_dim == 64 || head_dim == 128;
}

int flash_forward_smem_bytes(int64_t head_dim) {
  switch (head_dim) {
    case 64:
      return flash::FlashFwdConfig<64>::Traits::kSmemBytes;
    case 128:
      return flash::FlashFwdConfig<128>::Traits::kSmemBytes;
    default:
      return 0;
  }
}

cudaError_t launch_flash_forward(DType t, const AttentionShape& shape, const void* q, const void* k,
                                 const void* v, void* o, cudaStream_t s) {
  switch (shape.head_dim) {
    case 64:
      return flash::launch_flash_forward_hdim<64>(t, shape, q, k, v, o, s);
    case 128:
      return flash::launch_flash_forward_hdim<128>(t, shape, q, k, v, o, s);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace sdpa
