// What the host sees of a fused attention kernel (flash, efficient): the arguments of one
// forward, and the limits the kernel accepts, stated once beside its traits. The launcher
// refuses a shape outside them (cudaErrorInvalidValue); the backend's unsupported() says why,
// from the same limits.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "attention_shape.h"
#include "dtype.h"
#include "paged_kv.h"

namespace sdpa {

// O = softmax(scale * Q K^T [causal mask]) V on `stream`. Q, O: [B, Hq, Sq, D]; K, V:
// [B, Hkv, Skv, D]; all contiguous. `workspace`: the kernel's workspace_bytes() of device memory,
// zeroed before the first launch that uses it; the kernel leaves it as it must find it next.
struct FusedForward {
  DType dtype;
  AttentionShape shape;
  const void* q;
  const void* k;
  const void* v;
  void* o;
  cudaStream_t stream;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  // A paged K/V cache (k and v null): only for a kernel whose limits say reads_paged_kv.
  const PagedKv* paged = nullptr;
  // When set, [B, Hq, Sq] fp32: each row's log2-sum-exp2 of its scaled scores (in exp2 units:
  // P = exp2(s * scale * log2(e) - lse)), for a backward. Kernels that keep no statistics ignore it.
  float* lse = nullptr;
};

// A head dim the kernel is compiled for, and the dynamic shared memory one CTA asks for there.
struct FusedHeadDim {
  int head_dim;
  int smem_bytes;
};

// Every fused kernel keeps positions in 32-bit ints.
inline constexpr int64_t kFusedMaxSeqLen = INT32_MAX;

struct FusedKernelLimits {
  std::span<const FusedHeadDim> head_dims;  // ascending
  const char* head_dim_rule;                // why other head dims are not built
  int min_arch;                             // 80 for sm_80
  const char* arch_needs;                   // what the kernel uses from that architecture
  int64_t max_grid_yz;                      // heads run on grid y, batches on grid z
  bool exact_arch = false;                  // arch-specific code (sm_90a): runs on min_arch only
  bool reads_paged_kv = false;              // reads K and V through FusedForward::paged
  // With reads_paged_kv, a kernel that reads pages only for short queries (a decode kernel)
  // states the longest such query (0: any length), and a key block that a page size must divide
  // or be a multiple of (0: any page size).
  int64_t paged_max_seq_q = 0;
  int64_t paged_key_block = 0;

  const FusedHeadDim* find(int64_t head_dim) const {
    for (const FusedHeadDim& h : head_dims)
      if (h.head_dim == head_dim) return &h;
    return nullptr;
  }
};

// The limits of a shape alone (the device's, architecture and shared memory, are the backend's
// to check), in the order the backend reports them.
enum class FusedLimit { none, head_dim, empty, head_groups, seq_len, grid };

inline FusedLimit broken_limit(const FusedKernelLimits& limits, const AttentionShape& s) {
  if (limits.find(s.head_dim) == nullptr) return FusedLimit::head_dim;
  if (s.seq_q < 1 || s.seq_kv < 1 || s.kv_heads < 1) return FusedLimit::empty;
  if (s.heads % s.kv_heads != 0) return FusedLimit::head_groups;
  if (s.seq_q > kFusedMaxSeqLen || s.seq_kv > kFusedMaxSeqLen) return FusedLimit::seq_len;
  if (s.heads > limits.max_grid_yz || s.batch > limits.max_grid_yz) return FusedLimit::grid;
  return FusedLimit::none;
}

// Why a kernel cannot read a paged K/V cache of `page_size` tokens a page for shape `s`.
enum class FusedPagedLimit { none, not_read, seq_q, page_size };

inline FusedPagedLimit broken_paged_limit(const FusedKernelLimits& limits, const AttentionShape& s,
                                          int64_t page_size) {
  if (!limits.reads_paged_kv) return FusedPagedLimit::not_read;
  if (limits.paged_max_seq_q > 0 && s.seq_q > limits.paged_max_seq_q) return FusedPagedLimit::seq_q;
  const int64_t block = limits.paged_key_block;
  if (block > 0 && (page_size < 1 || (page_size % block != 0 && block % page_size != 0)))
    return FusedPagedLimit::page_size;
  return FusedPagedLimit::none;
}

// One backward of a kernel that has one: the forward it follows wrote `lse`
// (FusedForward::lse); `workspace` holds fused_backward_workspace_floats() floats.
struct FusedBackward {
  DType dtype;
  AttentionShape shape;
  const void* q;
  const void* k;
  const void* v;
  const void* o;
  const void* d_out;
  const float* lse;
  float* workspace;
  void* dq;
  void* dk;
  void* dv;
  cudaStream_t stream;
};

// A head's query rows rounded up to whole 64-row boxes: flash3's backward reads its row
// statistics by TMA, whose steps between heads must be multiples of 16 bytes.
inline int64_t padded_stat_rows(const AttentionShape& s) {
  return (s.seq_q + 63) / 64 * 64;
}

// The most a fused backward needs: two floats a padded query row (flash: delta; flash3: LSE and
// delta, padded) and the fp32 dQ accumulator, D a padded row (flash3 adds whole 64-row tiles).
inline int64_t fused_backward_workspace_floats(const AttentionShape& s) {
  return s.batch * s.heads * padded_stat_rows(s) * (2 + s.head_dim);
}

struct FusedForwardKernel {
  FusedKernelLimits limits;
  // cudaErrorInvalidValue where broken_limit() is not none, else the launch's cudaGetLastError().
  cudaError_t (*launch)(const FusedForward& forward);
  // The workspace a launch of `shape` on the current device needs; null: none.
  std::size_t (*workspace_bytes)(const AttentionShape& shape) = nullptr;
  // The kernel's backward (its forward then writes FusedForward::lse when asked); null: none.
  cudaError_t (*launch_backward)(const FusedBackward& backward) = nullptr;
  // The dynamic shared memory the backward's main kernel asks for at a built head dim, where it
  // may ask more than the forward (limits.head_dims); null: no more than the forward.
  int (*backward_smem_bytes)(int64_t head_dim) = nullptr;
};

}  // namespace sdpa
