#include "run/paged_kv_pool.h"

#include <numeric>
#include <random>
#include <utility>

#include "gpu/check.h"
#include "gpu/problem_shape.h"

namespace sdpa {

std::vector<int32_t> shuffled_block_table(int64_t batch, int64_t pages_per_sequence, uint64_t seed) {
  std::vector<int32_t> table(static_cast<std::size_t>(batch * pages_per_sequence));
  std::iota(table.begin(), table.end(), 0);
  // Fisher-Yates over mt19937_64's raw output, whose sequence the standard fixes (std::shuffle's
  // use of it is the library's own); the modulo's bias is below 2^-32 at these sizes.
  std::mt19937_64 random(seed);
  for (std::size_t i = table.size(); i > 1; --i) std::swap(table[i - 1], table[random() % i]);
  return table;
}

namespace {

std::size_t pool_bytes(const Problem& p) {
  return static_cast<std::size_t>(p.kv_pool_elements()) * static_cast<std::size_t>(dtype_bytes(p.dtype));
}

std::size_t block_table_bytes(const Problem& p) {
  return static_cast<std::size_t>(p.batch * p.pages_per_sequence()) * sizeof(int32_t);
}

}  // namespace

std::size_t PagedKvPool::bytes(const Problem& p) {
  return p.paged() ? 2 * pool_bytes(p) + block_table_bytes(p) : 0;
}

PagedKvPool::PagedKvPool(const Problem& p)
    : shape_(attention_shape(p)),
      layout_(paged_kv_layout(shape_, p.page_size)),
      k_pool_(pool_bytes(p)),
      v_pool_(pool_bytes(p)),
      block_table_(block_table_bytes(p)),
      view_{layout_, k_pool_.get(), v_pool_.get(), block_table_.as<int32_t>()} {}

void PagedKvPool::fill(const void* k, const void* v, uint64_t seed, cudaStream_t stream) {
  const std::vector<int32_t> table = shuffled_block_table(shape_.batch, layout_.pages_per_sequence, seed);
  SDPA_CHECK_CUDA(cudaMemcpyAsync(block_table_.get(), table.data(), block_table_.bytes(), cudaMemcpyHostToDevice,
                                  stream));
  // Zeros, not NaN, past each sequence's last key: a kernel that loads a whole last page and masks
  // its tail multiplies those rows by 0, and 0 * NaN would fail a correct kernel.
  SDPA_CHECK_CUDA(cudaMemsetAsync(k_pool_.get(), 0, k_pool_.bytes(), stream));
  SDPA_CHECK_CUDA(cudaMemsetAsync(v_pool_.get(), 0, v_pool_.bytes(), stream));
  SDPA_CHECK_CUDA(launch_scatter_to_pages(shape_, k, layout_, block_table_.as<int32_t>(), k_pool_.get(), stream));
  SDPA_CHECK_CUDA(launch_scatter_to_pages(shape_, v, layout_, block_table_.as<int32_t>(), v_pool_.get(), stream));
  // `table` is pageable host memory: the copy has finished with it when the call returns.
}

}  // namespace sdpa
