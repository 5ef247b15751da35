// FlashAttention-3 design forward for sm_90a, warp-specialised, assembled from its parts. A CTA
// works on query tiles of kBlockM rows of one (batch, head): one tile per CTA, or (persistent
// grid) tile after tile, each CTA taking the next one when it is done with the last
// (flash3_tile_scheduler.cuh). Warpgroup 0 is the producer: one thread issues the TMA loads of Q
// and of K and V into a ring of shared-memory stages (flash3_producer.cuh, flash3_smem.cuh).
// Each consumer warpgroup owns 64 query rows: S = Q K^T with wgmma, the online softmax in
// registers, O += P V with P from registers (flash3_mainloop.cuh, in the traits' schedule), then
// O normalised and written by TMA stores (flash3_epilogue.cuh). Q has two slots, so the next
// tile's Q loads while the consumers still work on this one. A persistent non-causal grid splits
// the tiles of its last round along the keys (flash3_tail_split.cuh).
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "attention_shape.h"
#include "flash3_epilogue.cuh"
#include "flash3_mainloop.cuh"
#include "flash3_producer.cuh"
#include "flash3_smem.cuh"
#include "flash3_tile_scheduler.cuh"
#include "flash3_traits.cuh"
#include "fused_launch.cuh"
#include "tma_map.h"

namespace sdpa::flash3 {

template <typename Traits, typename T, bool kCausal>
__global__ void __launch_bounds__(Traits::kNThreads, 1)
    flash3_fwd_kernel(const __grid_constant__ CUtensorMap map_q,
                      const __grid_constant__ CUtensorMap map_k,
                      const __grid_constant__ CUtensorMap map_v,
                      const __grid_constant__ CUtensorMap map_o, const AttentionShape p,
                      const int heads_per_section, const TailSplit split, const TileQueue queue,
                      float* const lse) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Smem = Flash3Smem<Traits>;
  using Rows = ConsumerRows<Traits, T, kCausal>;
  extern __shared__ __align__(1024) unsigned char smem_bytes[];
  const Smem smem(shared_address(smem_bytes));
  const Flash3TileScheduler<Traits, kCausal> scheduler(p, heads_per_section, split, queue);
  const int tid = static_cast<int>(threadIdx.x);
  const int wg = tid / 128;
  if (tid == 0) smem.init_barriers();
  __syncthreads();

  if (wg == 0) {
    lower_registers<Traits::kProducerRegs>();
    if (tid == 0) run_producer(smem, scheduler, &map_q, &map_k, &map_v);
    return;
  }

  raise_registers<Traits::kConsumerRegs>();
  // The consumer warpgroup, and below the tile, warp-uniform: the descriptors and stage
  // addresses made from them stay in uniform registers.
  const int cw = static_cast<int>(warp_uniform(static_cast<uint32_t>(wg))) - 1;
  const int tw = tid % 128;
  const int warp = tw / 32;
  const int lane = tid % 32;
  const int g = lane / 4;
  const Flash3Epilogue<Traits, T, kCausal> epilogue{smem, &map_o, lse, cw, tw, warp, g, lane % 4};
  const int seq_q = static_cast<int>(p.seq_q);
  uint32_t used = 0;  // the key blocks this CTA consumed in earlier units: the ring's position
  for (int tile_count = 0;; ++tile_count) {
    const int slot = Smem::q_slot(tile_count);
    mbarrier_wait(smem.q_full(slot), Smem::q_parity(tile_count));
    const int64_t i = scheduler.published(slot, tile_count);
    if (i >= scheduler.n_units) break;
    const auto tile = scheduler.unit_at(i);
    const int wg_row0 = tile.m0 + cw * Traits::kWGRows;
    Rows rows{.q_wg = smem.q_tile(slot) + cw * Traits::kWGRows * 128,
              .wg_row0 = wg_row0,
              .warp_row0 = wg_row0 + warp * 16,
              .row0 = wg_row0 + warp * 16 + epilogue.g,
              .t = epilogue.t,
              .seq_kv = scheduler.seq_kv,
              .scale_log2 = p.scale * 1.4426950408889634f};
    float acc_o[Rows::kOAcc];
#pragma unroll
    for (int j = 0; j < Rows::kOAcc; ++j) acc_o[j] = 0.f;
    KeyBlocks<Traits> blocks{smem, used, slot, tile.first_block, tile.n_blocks};
    if constexpr (kSkipsDeadBlocks<Traits, kCausal>)
      blocks.skip(tile.n_blocks - rows.live_blocks(tile.n_blocks, seq_q));
    Flash3Mainloop<Traits, T, kCausal>::run(rows, blocks, cw, acc_o);
    used = blocks.used + static_cast<uint32_t>(blocks.n_blocks);
    epilogue.store(rows, acc_o, tile_count, tile.bh_q, tile.split_slot, split, seq_q);
  }
  epilogue.drain();
#else
  __trap();  // built for sm_90a only (kernels/CMakeLists.txt); the backend never launches it
             // elsewhere
#endif
}

// Query heads per section of the tile order: the key/value heads whose K and V fill a share of
// the L2 (the rest holds Q, O and what other tiles stream), times the query heads that share
// each. Half the L2 when causal, an eighth otherwise: every non-causal tile streams all of its
// head's K and V, and with sections of half the L2 they were evicted before the section's last
// tiles read them (B8 H16 S4096 D128 on the H200: 1.30 GB of DRAM per forward at a half, 0.61
// at a quarter, 0.53 at an eighth, the least there is; causal sections of a quarter moved
// 0.53 GB against a half's 0.58 but ran 2% slower).
inline int section_heads(const AttentionShape& s, int element_bytes, int l2_bytes) {
  const int64_t kv_head_bytes = 2 * s.seq_kv * s.head_dim * element_bytes;
  const int64_t l2_share = l2_bytes / (s.causal ? 2 : 8);
  const int64_t kv_heads =
      std::clamp<int64_t>(l2_share / std::max<int64_t>(kv_head_bytes, 1), 1, s.batch * s.kv_heads);
  return static_cast<int>(kv_heads * (s.heads / s.kv_heads));
}

template <int kHeadDim, Flash3Schedule kSchedule, bool kPersistent>
cudaError_t launch_flash3_forward_hdim(const FusedForward& f) {
  using Traits = typename Flash3FwdConfig<kHeadDim, kSchedule>::Traits;
  // One CTA per tile, or (persistent) one per SM looping over the tiles.
  const int64_t n_tiles =
      (f.shape.seq_q + Traits::kBlockM - 1) / Traits::kBlockM * f.shape.batch * f.shape.heads;
  if (n_tiles > INT32_MAX) return cudaErrorInvalidValue;
  int device = 0;
  int sms = 0;
  int l2_bytes = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  for (const auto& [attr, value] : {std::pair{cudaDevAttrMultiProcessorCount, &sms},
                                    std::pair{cudaDevAttrL2CacheSize, &l2_bytes}})
    if (const cudaError_t e = cudaDeviceGetAttribute(value, attr, device); e != cudaSuccess)
      return e;
  const AttentionShape& s = f.shape;
  // A persistent grid splits the tiles of its last round (flash3_tail_split.cuh).
  const int64_t max_grid = std::min(sms, kMaxPersistentCtas);
  const TailSplitPlan plan = kPersistent
                                 ? plan_tail_split(s, Traits::kBlockM, Traits::kBlockN, max_grid)
                                 : TailSplitPlan{1, n_tiles, n_tiles, n_tiles};
  if (plan.units > INT32_MAX) return cudaErrorInvalidValue;
  // The workspace: the tile queue, then the split's parts (less than the kernel's
  // workspace_bytes() asks for is an error).
  const std::size_t split_bytes =
      plan.splits > 1 ? tail_split_layout(max_grid, Traits::kBlockM, kHeadDim).total() : 0;
  if (kPersistent && (f.workspace == nullptr || f.workspace_bytes < kTileQueueBytes + split_bytes))
    return cudaErrorInvalidValue;
  const TileQueue queue = kPersistent ? tile_queue_in(f.workspace) : TileQueue{};
  const TailSplit split =
      kPersistent ? tail_split_in(static_cast<unsigned char*>(f.workspace) + kTileQueueBytes, f.o,
                                  plan, max_grid, Traits::kBlockM, kHeadDim)
                  : TailSplit{};
  const int64_t grid = plan.grid;
  const int64_t q_heads = s.batch * s.heads;
  const int64_t kv_heads = s.batch * s.kv_heads;
  CUtensorMap map_q;
  CUtensorMap map_k;
  CUtensorMap map_v;
  CUtensorMap map_o;
  for (const cudaError_t e :
       {encode_head_major_map(map_q, f.q, f.dtype, q_heads, s.seq_q, kHeadDim, Traits::kBlockM),
        encode_head_major_map(map_k, f.k, f.dtype, kv_heads, s.seq_kv, kHeadDim, Traits::kBlockN),
        encode_head_major_map(map_v, f.v, f.dtype, kv_heads, s.seq_kv, kHeadDim, Traits::kBlockN),
        encode_head_major_map(map_o, f.o, f.dtype, q_heads, s.seq_q, kHeadDim, Traits::kWGRows)})
    if (e != cudaSuccess) return e;
  return dispatch_dtype(f.dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    auto* const causal = flash3_fwd_kernel<Traits, T, true>;
    auto* const full = flash3_fwd_kernel<Traits, T, false>;
    static const cudaError_t attr = allow_dynamic_smem(causal, full, Traits::kSmemBytes);
    if (attr != cudaSuccess) return attr;
    auto* const kernel = s.causal ? causal : full;
    kernel<<<static_cast<unsigned>(grid), Traits::kNThreads, Traits::kSmemBytes, f.stream>>>(
        map_q, map_k, map_v, map_o, s, section_heads(s, sizeof(T), l2_bytes), split, queue, f.lse);
    return cudaGetLastError();
  });
}

}  // namespace sdpa::flash3
