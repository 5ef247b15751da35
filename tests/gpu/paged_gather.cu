#include "paged_gather.h"

#include <cstdint>

namespace sdpa::test {
namespace {

__global__ void gather_from_pages_kernel(const uint16_t* pool, uint16_t* contiguous, PagedKvLayout layout,
                                         const int32_t* block_table, AttentionShape shape, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t d = i % shape.head_dim;
    const int64_t row = i / shape.head_dim;
    const int64_t s = row % shape.seq_kv;
    const int64_t bh = row / shape.seq_kv;
    contiguous[i] = pool[paged_kv_offset(layout, block_table, bh / shape.kv_heads, bh % shape.kv_heads, s) + d];
  }
}

}  // namespace

cudaError_t launch_gather_from_pages(const AttentionShape& shape, const PagedKv& paged, const void* pool,
                                     void* contiguous, cudaStream_t stream) {
  const int64_t n = shape.batch * shape.kv_heads * shape.seq_kv * shape.head_dim;
  gather_from_pages_kernel<<<1024, 256, 0, stream>>>(static_cast<const uint16_t*>(pool),
                                                     static_cast<uint16_t*>(contiguous), paged.layout,
                                                     paged.block_table, shape, n);
  return cudaGetLastError();
}

}  // namespace sdpa::test
