// A paged KV cache as kernels see it: K and V each in a pool of pages of `page_size` tokens, a
// page holding [Hkv, page_size, D] (a head's rows contiguous, as in the contiguous [B, Hkv, S, D]
// layout), sequence b's i-th page at pool page block_table[b * pages_per_sequence + i]. The last
// page of a sequence whose length is not a multiple of page_size is partly filled; its other rows
// are zeros (a kernel that reads them must mask them). Host code and device code share the math.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "attention_shape.h"

namespace sdpa {

struct PagedKvLayout {
  int64_t page_size = 0;           // tokens per page
  int64_t pages_per_sequence = 0;  // the block table's row length: ceil(Skv / page_size)
  int64_t pool_pages = 0;          // B * pages_per_sequence: every sequence owns its pages
  int64_t page_stride = 0;         // elements from one pool page to the next: Hkv * page_size * D
  int64_t head_stride = 0;         // elements from one K/V head to the next inside a page: page_size * D
  int64_t row_stride = 0;          // elements from one token to the next inside a page: D
};

// K, V pools of the problem's dtype and the int32 block table [B, pages_per_sequence].
struct PagedKv {
  PagedKvLayout layout;
  const void* k_pool = nullptr;
  const void* v_pool = nullptr;
  const int32_t* block_table = nullptr;
};

inline PagedKvLayout paged_kv_layout(const AttentionShape& s, int64_t page_size) {
  PagedKvLayout l;
  l.page_size = page_size;
  l.pages_per_sequence = s.seq_kv / page_size + (s.seq_kv % page_size != 0);
  l.pool_pages = s.batch * l.pages_per_sequence;
  l.row_stride = s.head_dim;
  l.head_stride = page_size * s.head_dim;
  l.page_stride = s.kv_heads * l.head_stride;
  return l;
}

inline int64_t paged_kv_pool_elements(const PagedKvLayout& l) { return l.pool_pages * l.page_stride; }

// The pool offset, in elements, of key `s` of (batch b, K/V head h): element d of it is at + d.
__host__ __device__ inline int64_t paged_kv_offset(const PagedKvLayout& l, const int32_t* block_table,
                                                   int64_t b, int64_t h, int64_t s) {
  const int64_t page = block_table[b * l.pages_per_sequence + s / l.page_size];
  return page * l.page_stride + h * l.head_stride + (s % l.page_size) * l.row_stride;
}

// Copies contiguous K or V ([B, Hkv, Skv, D] of either dtype: both are 2 bytes) into `pool` through the block table
// (device memory); the pool rows past Skv are not written.
cudaError_t launch_scatter_to_pages(const AttentionShape& shape, const void* contiguous,
                                    const PagedKvLayout& layout, const int32_t* block_table, void* pool,
                                    cudaStream_t stream);

}  // namespace sdpa
