#include "gpu/device_buffer.h"

#include "gpu/check.h"

namespace sdpa {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) SDPA_CHECK_CUDA(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

CudaStream::CudaStream() { SDPA_CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
CudaStream::~CudaStream() { cudaStreamDestroy(stream_); }

CudaEvent::CudaEvent() { SDPA_CHECK_CUDA(cudaEventCreate(&event_)); }
CudaEvent::~CudaEvent() { cudaEventDestroy(event_); }

}  // namespace sdpa
