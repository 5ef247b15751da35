#include <cstdint>

#include "device_math.cuh"
#include "dtype.h"
#include "paged_kv.h"

namespace sdpa {
namespace {

using device::global_thread_index;
using device::grid_stride;

// One 16-bit element per step: both dtypes are two bytes, and this runs once per problem.
__global__ void scatter_to_pages_kernel(const uint16_t* contiguous, uint16_t* pool, PagedKvLayout layout,
                                        const int32_t* block_table, int64_t kv_heads, int64_t seq_kv,
                                        int64_t head_dim, int64_t n) {
  for (int64_t i = global_thread_index(); i < n; i += grid_stride()) {
    const int64_t d = i % head_dim;
    const int64_t row = i / head_dim;  // (b * Hkv + h) * Skv + s
    const int64_t s = row % seq_kv;
    const int64_t bh = row / seq_kv;
    pool[paged_kv_offset(layout, block_table, bh / kv_heads, bh % kv_heads, s) + d] = contiguous[i];
  }
}

}  // namespace

cudaError_t launch_scatter_to_pages(const AttentionShape& shape, const void* contiguous,
                                    const PagedKvLayout& layout, const int32_t* block_table, void* pool,
                                    cudaStream_t stream) {
  static_assert(dtype_bytes(DType::bf16) == sizeof(uint16_t) && dtype_bytes(DType::fp16) == sizeof(uint16_t));
  const int64_t n = shape.batch * shape.kv_heads * shape.seq_kv * shape.head_dim;
  if (n < 1 || layout.page_size < 1 || layout.row_stride != shape.head_dim) return cudaErrorInvalidValue;
  scatter_to_pages_kernel<<<elementwise_grid(n), kElementwiseBlock, 0, stream>>>(
      static_cast<const uint16_t*>(contiguous), static_cast<uint16_t*>(pool), layout, block_table, shape.kv_heads,
      shape.seq_kv, shape.head_dim, n);
  return cudaGetLastError();
}

}  // namespace sdpa
