// Cold-cache sampling: before each sample, a write over a buffer twice the L2's size evicts
// whatever the previous forward left there.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "gpu/device_buffer.h"

namespace sdpa {

class L2Flush {
 public:
  explicit L2Flush(std::size_t l2_bytes);
  void flush(cudaStream_t stream);
  std::size_t bytes() const { return buffer_.bytes(); }

 private:
  DeviceBuffer buffer_;
  int fill_ = 0;
};

}  // namespace sdpa
