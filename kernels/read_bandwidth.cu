#include "read_bandwidth.h"

namespace sdpa {
namespace {

// Each step a block reads one tile of kLoads * blockDim consecutive 16-byte words, thread t the
// words t, t + blockDim, ...: all of a thread's loads are issued before any is used, and the
// block's bytes of a step are one contiguous span (whole DRAM pages, not kLoads far-apart strips).
template <int kLoads>
__global__ void __launch_bounds__(kReadBandwidthBlock)
    read_bandwidth_kernel(const uint4* src, int64_t n, uint32_t* sink) {
  constexpr int64_t kTile = int64_t{kLoads} * kReadBandwidthBlock;
  uint32_t acc = 0;
  int64_t tile = blockIdx.x;
  for (; (tile + 1) * kTile <= n; tile += gridDim.x) {
    const uint4* p = src + tile * kTile + threadIdx.x;
    uint4 v[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u)
      v[u] = __ldcs(p + u * kReadBandwidthBlock);  // streaming: no reuse
#pragma unroll
    for (int u = 0; u < kLoads; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (tile * kTile < n) {  // the one partial tile, read by whichever block reaches it
    for (int64_t i = tile * kTile + threadIdx.x; i < n; i += kReadBandwidthBlock) {
      const uint4 v = __ldcs(src + i);
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
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
                                  int loads_in_flight, cudaStream_t stream) {
  if (bytes % sizeof(uint4) != 0 || reinterpret_cast<std::uintptr_t>(src) % sizeof(uint4) != 0 ||
      blocks < 1)
    return cudaErrorInvalidValue;
  const auto* words = static_cast<const uint4*>(src);
  const auto n = static_cast<int64_t>(bytes / sizeof(uint4));
  switch (loads_in_flight) {
    case 4:
      read_bandwidth_kernel<4><<<blocks, kReadBandwidthBlock, 0, stream>>>(words, n, sink);
      break;
    case 8:
      read_bandwidth_kernel<8><<<blocks, kReadBandwidthBlock, 0, stream>>>(words, n, sink);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace sdpa
