// The host side every fused attention kernel shares, written once: the head-dim table of its
// limits, the limit check and head-dim dispatch, the dtype dispatch, the opt-in to more than
// 48 KB of dynamic shared memory, the grid and the launch. A kernel brings its limits, its traits
// (kBlockM, kNThreads, kSmemBytes) and its kernel template (flash_fwd.cu, efficient_fwd.cu); one
// with a grid of its own (a persistent tile scheduler) passes that grid to launch_fused_forward.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <span>
#include <type_traits>

#include "dispatch.cuh"
#include "fused_forward.h"
#include "query_block.cuh"

namespace sdpa {

// The limits' head-dim table for `head_dims`: smem_of(std::integral_constant<int, D>) gives the
// dynamic shared memory at head dim D.
template <int... kHeadDims, typename SmemOf>
constexpr std::array<FusedHeadDim, sizeof...(kHeadDims)> fused_head_dim_table(IntList<kHeadDims...>,
                                                                              SmemOf smem_of) {
  return {FusedHeadDim{kHeadDims, smem_of(std::integral_constant<int, kHeadDims>{})}...};
}

// Refuses `f` outside `limits`, else launch_head_dim(std::integral_constant<int, D>) for f's
// head dim D (one of `head_dims`, the list `limits` was built from).
template <int... kHeadDims, typename LaunchHeadDim>
cudaError_t launch_within_limits(IntList<kHeadDims...> head_dims, const FusedKernelLimits& limits,
                                 const FusedForward& f, LaunchHeadDim&& launch_head_dim) {
  if (broken_limit(limits, f.shape) != FusedLimit::none) return cudaErrorInvalidValue;
  if (f.paged != nullptr &&
      broken_paged_limit(limits, f.shape, f.paged->layout.page_size) != FusedPagedLimit::none)
    return cudaErrorInvalidValue;
  return dispatch_int(head_dims, f.shape.head_dim, cudaErrorInvalidValue, launch_head_dim);
}

// The limits of a kernel built on mma_sm80.cuh and launched on the query-block grid: sm_80 for
// mma.sync with bf16 and cp.async, rows of whole 8-chunk swizzles, heads and batches on grid y, z.
constexpr FusedKernelLimits sm80_query_block_limits(std::span<const FusedHeadDim> head_dims) {
  return {.head_dims = head_dims,
          .head_dim_rule = "the kernel's swizzled tiles need a multiple of 64",
          .min_arch = 80,
          .arch_needs = "mma.sync m16n8k16 with bf16, cp.async",
          .max_grid_yz = kMaxGridYZ};
}

// Raises the dynamic shared-memory limit of a kernel's causal and full instantiations to `bytes`.
// Callers keep the result in a static of their own, so it runs once per kernel (thread-safe).
template <typename Kernel>
cudaError_t allow_dynamic_smem(Kernel* causal, Kernel* full, int bytes) {
  const cudaError_t c =
      cudaFuncSetAttribute(causal, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  const cudaError_t n =
      cudaFuncSetAttribute(full, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  return c != cudaSuccess ? c : n;
}

// Launches kernel_of(TypeTag<T>{}, std::bool_constant<kCausal>{}), a kernel taking
// (AttentionShape, const T* q, const T* k, const T* v, T* o, float* lse), for f's dtype and causal flag
// with Traits::kNThreads threads and Traits::kSmemBytes of dynamic shared memory on `grid`.
template <typename Traits, typename KernelOf>
cudaError_t launch_fused_forward(KernelOf kernel_of, const FusedForward& f, dim3 grid) {
  return dispatch_dtype(f.dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    auto* const causal = kernel_of(type, std::true_type{});
    auto* const full = kernel_of(type, std::false_type{});
    static const cudaError_t attr = allow_dynamic_smem(causal, full, Traits::kSmemBytes);
    if (attr != cudaSuccess) return attr;
    auto* const kernel = f.shape.causal ? causal : full;
    kernel<<<grid, Traits::kNThreads, Traits::kSmemBytes, f.stream>>>(
        f.shape, static_cast<const T*>(f.q), static_cast<const T*>(f.k), static_cast<const T*>(f.v),
        static_cast<T*>(f.o), f.lse);
    return cudaGetLastError();
  });
}

// The same on the query-block grid.
template <typename Traits, typename KernelOf>
cudaError_t launch_fused_forward(KernelOf kernel_of, const FusedForward& f) {
  return launch_fused_forward<Traits>(kernel_of, f, query_block_grid<Traits>(f.shape));
}

}  // namespace sdpa
