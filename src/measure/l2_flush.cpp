#include "measure/l2_flush.h"

#include <algorithm>

#include "gpu/check.h"

namespace sdpa {

L2Flush::L2Flush(std::size_t l2_bytes) : buffer_(2 * std::max<std::size_t>(l2_bytes, 1 << 20)) {}

void L2Flush::flush(cudaStream_t stream) {
  fill_ ^= 1;  // a different value each time, so no write can be elided
  SDPA_CHECK_CUDA(cudaMemsetAsync(buffer_.get(), fill_, buffer_.bytes(), stream));
}

}  // namespace sdpa
