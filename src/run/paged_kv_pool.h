// The paged KV cache of one problem on the device (kernels/paged_kv.h has the layout): the K and V
// page pools and the block table, filled from the contiguous K and V that the reference reads, so
// one set of random inputs drives both layouts and the contiguous reference verifies a paged run.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu/device_buffer.h"
#include "model/problem.h"
#include "paged_kv.h"

namespace sdpa {

// Row b lists the pool pages of sequence b in order: a permutation of 0 .. B*P-1 shuffled by
// `seed` alone (the same seed deals the same pages on every machine), P = pages_per_sequence.
std::vector<int32_t> shuffled_block_table(int64_t batch, int64_t pages_per_sequence, uint64_t seed);

class PagedKvPool {
 public:
  explicit PagedKvPool(const Problem& p);  // allocates; throws ApiError when memory runs out

  // Device bytes of both pools and the block table; 0 for a contiguous problem.
  static std::size_t bytes(const Problem& p);

  // Zeroes the pools, uploads a block table shuffled by `seed` and scatters K and V into pages.
  void fill(const void* k, const void* v, uint64_t seed, cudaStream_t stream);
  // What a backend reads; the same object for the pool's life, so a backend may keep its address.
  const PagedKv& view() const { return view_; }

 private:
  AttentionShape shape_;
  PagedKvLayout layout_;
  DeviceBuffer k_pool_, v_pool_, block_table_;
  PagedKv view_;
};

}  // namespace sdpa
