#include "read_bandwidth.h"

namespace sdpa {
namespace {

// Four independent 16-byte loads in flight per thread per step: enough bytes in flight per SM
// to cover HBM latency at full bandwidth without relying on occupancy alone.
constexpr int kUnroll = 4;

__global__ void __launch_bounds__(kReadBandwidthBlock) read_bandwidth_kernel(const uint4* src, int64_t n,
                                                                              uint32_t* sink) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  uint32_t acc = 0;
  int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(src + i + u * stride);  // streaming: no reuse
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) {
    const uint4 v = __ldcs(src + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  // One word per block: the XOR of its threads' words, through shared memory atomics.
  __shared__ uint32_t block_acc;
  if (threadIdx.x == 0) block_acc = 0;
  __syncthreads();
  atomicXor(&block_acc, acc);
  __syncthreads();
  if (threadIdx.x == 0) sink[blockIdx.x] = block_acc;
}

}  // namespace

cudaError_t launch_read_bandwidth(const void* src, std::size_t bytes, uint32_t* sink, int blocks,
                                  cudaStream_t stream) {
  if (bytes % sizeof(uint4) != 0 || reinterpret_cast<std::uintptr_t>(src) % sizeof(uint4) != 0 || blocks < 1)
    return cudaErrorInvalidValue;
  read_bandwidth_kernel<<<blocks, kReadBandwidthBlock, 0, stream>>>(
      static_cast<const uint4*>(src), static_cast<int64_t>(bytes / sizeof(uint4)), sink);
  return cudaGetLastError();
}

}  // namespace sdpa
