#include "measure/l2_clean.h"

#include <algorithm>

#include "gpu/cublas_check.h"

namespace sdpa {

L2Clean::L2Clean(std::size_t l2_bytes) : buffer_(kL2CleanFactor * std::max<std::size_t>(l2_bytes, 1 << 20)) {
  SDPA_CHECK_CUDA(cudaMemset(buffer_.get(), 0,
                             buffer_.bytes()));  // written once, so that reads see defined data
  clean(nullptr);
}

void L2Clean::clean(cudaStream_t stream) {
  // asum: a read of the whole buffer that writes one float.
  float sum = 0;
  SDPA_CHECK_CUBLAS(cublasSetStream(cublas_.get(), stream));
  SDPA_CHECK_CUBLAS(cublasSasum(cublas_.get(), static_cast<int>(buffer_.bytes() / sizeof(float)),
                                buffer_.as<float>(), 1, &sum));
}

}  // namespace sdpa
