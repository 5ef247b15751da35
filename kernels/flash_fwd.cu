#include "flash_fwd.h"
#include "flash_traits.cuh"

namespace sdpa {

bool flash_forward_supports_head_dim(int64_t head_dim) { return head_dim == 64 || head_dim == 128; }

cudaError_t launch_flash_forward(DType t, const AttentionShape& shape, const void* q,
                                 const void* k, const void* v, void* o, cudaStream_t s) {
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
