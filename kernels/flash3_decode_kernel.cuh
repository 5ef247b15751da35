// flash3's decode kernel: short queries (Sq <= 16) against a long K/V cache, contiguous or paged.
// Decode is memory-bound, so the kernel is built to keep HBM busy rather than the tensor cores:
// - packed grouped heads: the H/Hkv query heads that share a K/V head, times Sq, are the rows of
//   one CTA's m16 tile (or two), so a group reads its K and V once;
// - split-KV: a sequence's key blocks split over `splits` CTAs (flash3_decode_plan.h chooses how
//   many from the shape and the SM count), each leaving a normalised partial O and its rows'
//   log2-sum-exp2 in the workspace; the CTA that finishes a unit's splits last combines them;
// - inside a CTA, each of the 4 warps owns 16 keys of every 64-key block (scores, online
//   softmax, a partial O of all rows), and the warps' parts are merged in shared memory at the end
//   (flash3_decode_combine.cuh, with the splits' combine);
// - K and V stream through a kStages-deep ring of TMA boxes (128-byte swizzle, one mbarrier a
//   stage), which warp 0 refills as soon as every warp is past a block: kStages blocks in flight
//   while a CTA waits; mma.sync m16n8k16 and ldmatrix as in the flash kernel (mma_sm80.cuh),
//   which Hopper runs as well.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "dispatch.cuh"
#include "flash3_decode_combine.cuh"
#include "flash3_decode_plan.h"
#include "fused_forward.h"
#include "mma_sm80.cuh"
#include "mma_sm90.cuh"
#include "tma_map.h"

namespace sdpa::flash3 {

template <typename T, int kHeadDim, int kMTiles, int kCtasPerSm>
__global__ void __launch_bounds__(kDecodeThreads, kCtasPerSm)
    flash3_decode_kernel(const __grid_constant__ CUtensorMap map_k,
                         const __grid_constant__ CUtensorMap map_v, const DecodeParams p) {
  using namespace sm80;
  using Traits = DecodeTraits<kHeadDim, kCtasPerSm>;
  constexpr int D = kHeadDim;
  constexpr int kRows = 16 * kMTiles;
  constexpr int kRowBytes = Traits::kRowBytes;
  constexpr int kChunksPerRow = D / 8;
  constexpr int kRowsPerPass = kDecodeThreads / kChunksPerRow;
  static_assert(kRows % kRowsPerPass == 0, "whole cp.async passes");
  static_assert(kRowsPerPass % 8 == 0, "a thread's swizzle phase stays the same between passes");
  static_assert(kDecodeBlockN == 16 * kDecodeWarps, "each warp owns 16 keys of a block");

  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // TMA's 128-byte swizzle starts its 8-row atoms 1024-aligned (kAlignBytes of room for this).
  const uint32_t raw = shared_address(smem_raw);
  const uint32_t s_q = (raw + Traits::kAlignBytes - 1) & ~uint32_t{Traits::kAlignBytes - 1};
  unsigned char* const smem = smem_raw + (s_q - raw);
  const uint32_t s_kv = s_q + Traits::kQBytes;
  const uint32_t s_full = s_q + Traits::kBarrierOffset;  // a barrier a stage: its block landed

  const int rb = static_cast<int>(blockIdx.x) % p.row_blocks;
  const int split = static_cast<int>(blockIdx.x) / p.row_blocks;
  const int h = static_cast<int>(blockIdx.y);
  const int b = static_cast<int>(blockIdx.z);
  const int64_t unit = (static_cast<int64_t>(b) * p.kv_heads + h) * p.row_blocks + rb;
  const int row0 = rb * kRows;  // the CTA's first row of the group's packed rows
  const int valid_rows = min(kRows, p.group_rows - row0);
  // The group's rows are contiguous in Q and O: heads h*G .. h*G+G-1, Sq rows each.
  const int64_t first_row =
      (static_cast<int64_t>(b) * p.heads + static_cast<int64_t>(h) * (p.heads / p.kv_heads)) *
          p.seq_q +
      row0;
  const T* const q = static_cast<const T*>(p.q) + first_row * D;
  const int first_block = split * p.blocks_per_split;
  const int n_blocks = min(p.blocks_per_split, p.n_blocks - first_block);

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32;
  const int lane = tid % 32;
  // Q by cp.async into the tiles' layout: consecutive threads copy consecutive 16-byte chunks of
  // a row, chunk c in half c / 8.
  {
    const int ld_row = tid / kChunksPerRow;
    const int ld_chunk = tid % kChunksPerRow;
    const uint32_t ld_smem = (ld_chunk / 8) * Traits::kQHalfBytes + ld_row * kRowBytes +
                             (((ld_chunk % 8) ^ (ld_row & 7)) * 16);
#pragma unroll
    for (int pass = 0; pass < kRows / kRowsPerPass; ++pass) {
      const int r = ld_row + pass * kRowsPerPass;
      const bool valid = r < valid_rows;
      cp_async_16(s_q + ld_smem + pass * kRowsPerPass * kRowBytes,
                  q + (valid ? r * D + ld_chunk * 8 : 0), valid);
    }
    cp_async_commit();
  }

  // Warp 0 reads the K/V boxes: lane i the i-th box of a block's keys (one box, or a page each).
  // The box of key block nb (counted in the split) is found before the barrier that frees its
  // stage, so that a block-table lookup overlaps the wait for it.
  const bool box_lane = warp == 0 && lane < p.kv.boxes_per_block();
  auto find_box = [&](int nb) {
    return p.kv.box(b, h, (first_block + nb) * kDecodeBlockN + lane * p.kv.box_rows);
  };
  auto load_block = [&](DecodeKvBox box, int stage) {
    const uint32_t full = s_full + 8 * stage;
    if (lane == 0) sm90::mbarrier_arrive_expect_tx(full, Traits::kStageBytes);
    __syncwarp();
    if (box_lane) {
      const uint32_t s_k = s_kv + stage * Traits::kStageBytes + lane * p.kv.box_rows * kRowBytes;
#pragma unroll
      for (int half = 0; half < Traits::kHalves; ++half) {
        const uint32_t at = s_k + half * Traits::kTileHalfBytes;
        sm90::tma_load_3d(at, &map_k, full, half * 64, box.row, box.head);
        sm90::tma_load_3d(at + Traits::kTileBytes, &map_v, full, half * 64, box.row, box.head);
      }
    }
  };
  // Warp 0 initialises the barriers and fills every stage at once; the other warps first touch
  // the barriers after the main loop's first __syncthreads.
  if (warp == 0) {
    DecodeKvBox first[Traits::kStages]{};
#pragma unroll
    for (int s = 0; s < Traits::kStages; ++s)
      if (box_lane && s < n_blocks) first[s] = find_box(s);
    if (lane == 0) {
#pragma unroll
      for (int s = 0; s < Traits::kStages; ++s) sm90::mbarrier_init(s_full + 8 * s, 1);
      sm90::mbarrier_init_fence();
    }
    __syncwarp();
#pragma unroll
    for (int s = 0; s < Traits::kStages; ++s)
      if (s < n_blocks) load_block(first[s], s);
  }

  const int g = lane / 4;  // accumulator row within an m16 tile (and g + 8)
  const int t = lane % 4;  // accumulator column pair
  // ldmatrix lane addresses, as in the flash kernel. Q (A, x4) and V (B, x4.trans): row
  // lane%8 + 8*((lane/8)%2), chunk pair half lane/16. K (B, x4): row lane%8 + 8*(lane/16), half
  // (lane/8)%2.
  const int qv_row = (lane % 8) + 8 * ((lane / 8) % 2);
  const int k_row = (lane % 8) + 8 * (lane / 16);
  const uint32_t qv_phase = ((lane / 16) ^ (lane % 8)) * 16;
  const uint32_t k_phase = (((lane / 8) % 2) ^ (lane % 8)) * 16;
  const uint32_t q_lane = (s_q + qv_row * kRowBytes) | qv_phase;
  constexpr int kQNextLine = Traits::kQHalfBytes;  // swizzled_pair's step to the next half
  constexpr int kKvNextLine = Traits::kTileHalfBytes;
  const int warp_key0 = warp * 16;  // the warp's keys in a block

  // The query position (0 .. Sq-1) of the thread's accumulator rows g and g + 8 of each m16
  // tile, for the causal mask.
  int query_pos[kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half)
      query_pos[mt][half] = (row0 + mt * 16 + g + half * 8) % p.seq_q;

  float acc_o[kMTiles][D / 8][4];
  float row_max[kMTiles][2];
  float row_sum[kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_o[mt][nt][e] = 0.f;
    row_max[mt][0] = row_max[mt][1] = -INFINITY;
    row_sum[mt][0] = row_sum[mt][1] = 0.f;
  }

  cp_async_wait<0>();  // Q landed; the loop's first barrier shows it to every warp
  int stage = 0;
  uint32_t phase = 0;
  for (int nb = 0; nb < n_blocks; ++nb) {
    // Block `ahead` goes into nb - 1's stage once every warp is done with it; the prologue
    // loaded blocks up to kStages - 1.
    const int ahead = nb + Traits::kStages - 1;
    const bool load_ahead = nb > 0 && ahead < n_blocks;
    DecodeKvBox box{};
    if (box_lane && load_ahead) box = find_box(ahead);
    __syncthreads();
    if (warp == 0 && load_ahead) load_block(box, stage == 0 ? Traits::kStages - 1 : stage - 1);
    sm90::mbarrier_wait(s_full + 8 * stage, phase);  // block nb landed
    const uint32_t s_k = s_kv + stage * Traits::kStageBytes;
    const uint32_t k_lane = (s_k + (warp_key0 + k_row) * kRowBytes) | k_phase;
    const uint32_t v_lane =
        (s_k + Traits::kTileBytes + (warp_key0 + qv_row) * kRowBytes) | qv_phase;
    if (++stage == Traits::kStages) {
      stage = 0;
      phase ^= 1;
    }

    // S = Q K^T over the warp's 16 keys: n8 tiles 0 (keys 0-7) and 1 (keys 8-15).
    float acc_s[kMTiles][2][4];
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc_s[mt][nt][e] = 0.f;
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
      uint32_t bk[4];
      ldmatrix_x4(bk, swizzled_pair(k_lane, ks, kKvNextLine));
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        uint32_t a[4];
        ldmatrix_x4(a, swizzled_pair(q_lane, ks, kQNextLine) + mt * 16 * kRowBytes);
        mma_16816<T>(acc_s[mt][0], a, bk[0], bk[1]);
        mma_16816<T>(acc_s[mt][1], a, bk[2], bk[3]);
      }
    }

    // Keys past the visible ones, and causal keys after the query, score -inf. Element
    // (mt, nt, e) is key n0 + warp_key0 + nt*8 + 2t + e%2 of row mt*16 + g + (e/2)*8.
    const int key0 = (first_block + nb) * kDecodeBlockN + warp_key0 + 2 * t;
    if (p.causal || key0 - 2 * t + 16 > p.visible_keys) {
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int nt = 0; nt < 2; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int key = key0 + nt * 8 + e % 2;
            if (key >= p.visible_keys || (p.causal && key > query_pos[mt][e / 2]))
              acc_s[mt][nt][e] = -INFINITY;
          }
    }

    // Online softmax over the warp's keys, rows g and g + 8 of each m16 tile; 4 lanes share a row.
    bool rescale = false;
    float alpha[kMTiles][2];
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float mx = fmaxf(fmaxf(acc_s[mt][0][2 * half], acc_s[mt][0][2 * half + 1]),
                         fmaxf(acc_s[mt][1][2 * half], acc_s[mt][1][2 * half + 1]));
        mx = fmaxf(mx, row_max[mt][half]);
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        // A row with every key masked so far keeps max -inf; subtract 0 so exp2 gives 0.
        const float mx_scaled = mx == -INFINITY ? 0.f : mx * p.scale_log2;
        alpha[mt][half] = fast_exp2(row_max[mt][half] * p.scale_log2 - mx_scaled);
        rescale |= mx != row_max[mt][half];
        row_max[mt][half] = mx;
        float sum = 0.f;
#pragma unroll
        for (int nt = 0; nt < 2; ++nt)
#pragma unroll
          for (int j = 0; j < 2; ++j) {
            float& s = acc_s[mt][nt][2 * half + j];
            s = fast_exp2(fmaf(s, p.scale_log2, -mx_scaled));
            sum += s;
          }
        row_sum[mt][half] = row_sum[mt][half] * alpha[mt][half] + sum;
      }
    if (__any_sync(0xffffffffu, rescale)) {
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc_o[mt][nt][e] *= alpha[mt][e / 2];
    }

    // O += P V: P (16 keys) is one k16 step, its A fragment the scores' accumulator layout packed.
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      const uint32_t pa[4] = {
          pack2<T>(acc_s[mt][0][0], acc_s[mt][0][1]), pack2<T>(acc_s[mt][0][2], acc_s[mt][0][3]),
          pack2<T>(acc_s[mt][1][0], acc_s[mt][1][1]), pack2<T>(acc_s[mt][1][2], acc_s[mt][1][3])};
#pragma unroll
      for (int d16 = 0; d16 < D / 16; ++d16) {
        uint32_t bv[4];
        ldmatrix_x4_trans(bv, swizzled_pair(v_lane, d16, kKvNextLine));
        mma_16816<T>(acc_o[mt][2 * d16], pa, bv[0], bv[1]);
        mma_16816<T>(acc_o[mt][2 * d16 + 1], pa, bv[2], bv[3]);
      }
    }
  }
  __syncthreads();  // every warp is done with the stages: the combine takes them over

  unsigned char* const combine = smem + Traits::kQBytes;
  stage_warp_part<kHeadDim, kMTiles>(combine, acc_o, row_max, row_sum, warp, g, t);
  __syncthreads();
  T* const o = static_cast<T*>(p.o) + first_row * D;
  const int64_t part = unit * p.splits + split;  // this CTA's slot among the unit's parts
  merge_warp_parts<T, kHeadDim, kRows>(combine, p, o, part, valid_rows);
  if (p.splits > 1)
    combine_splits_if_last<T, kHeadDim, Traits::kMaxSplits>(combine, p, o, unit, valid_rows);
}

// Launches the kernel of `kHeadDim` for f's dtype and packed rows (one m16 tile or two), planned
// for the current device; cudaErrorInvalidValue where the workspace is short of the plan's, the
// pages are of a size the kernel cannot read, the driver refuses a tensor map, or the plan splits
// into more parts than the chosen kernel's combine holds.
template <int kHeadDim>
cudaError_t launch_flash3_decode_hdim(const FusedForward& f, const DecodePlan& plan) {
  DecodeParams p{};
  p.q = f.q;
  p.o = f.o;
  // K and V as TMA maps: the contiguous [B * Hkv, Skv, D], or the pools' [pages * Hkv, page, D].
  const void* k = f.k;
  const void* v = f.v;
  int64_t map_heads = f.shape.batch * f.shape.kv_heads;
  int64_t map_rows = f.shape.seq_kv;
  if (f.paged != nullptr) {
    if (!paged_kv_boxes(*f.paged, f.shape.kv_heads, plan.visible_keys, p.kv))
      return cudaErrorInvalidValue;
    k = f.paged->k_pool;
    v = f.paged->v_pool;
    map_heads = f.paged->layout.pool_pages * f.shape.kv_heads;
    map_rows = f.paged->layout.page_size;
  } else {
    p.kv = contiguous_kv_boxes(f.shape, plan.visible_keys);
  }
  CUtensorMap map_k;
  CUtensorMap map_v;
  for (const auto& [map, base] : {std::pair{&map_k, k}, std::pair{&map_v, v}})
    if (const cudaError_t e = encode_head_major_map(*map, base, f.dtype, map_heads, map_rows,
                                                    kHeadDim, p.kv.box_rows);
        e != cudaSuccess)
      return e;
  if (f.workspace_bytes < decode_workspace_bytes(plan, kHeadDim)) return cudaErrorInvalidValue;
  p.parts = decode_workspace(f.workspace, plan);
  p.heads = static_cast<int>(f.shape.heads);
  p.kv_heads = static_cast<int>(f.shape.kv_heads);
  p.seq_q = static_cast<int>(f.shape.seq_q);
  p.group_rows = static_cast<int>(decode_group_rows(f.shape));
  p.visible_keys = static_cast<int>(plan.visible_keys);
  p.row_blocks = plan.row_blocks;
  p.blocks_per_split = plan.blocks_per_split;
  p.n_blocks = plan.n_blocks;
  p.splits = plan.splits;
  p.causal = f.shape.causal;
  p.scale_log2 = f.shape.scale * 1.4426950408889634f;
  const dim3 grid(static_cast<unsigned>(plan.row_blocks * plan.splits),
                  static_cast<unsigned>(f.shape.kv_heads), static_cast<unsigned>(f.shape.batch));
  return dispatch_dtype(f.dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    // Each kernel's shared memory is set once, before its first launch (a static per kernel:
    // the kernels have the same type).
    const auto launch = [&](auto tiles, auto ctas) {
      constexpr int kMTiles = decltype(tiles)::value;
      constexpr int kCtasPerSm = decltype(ctas)::value;
      constexpr int kSmemBytes = DecodeTraits<kHeadDim, kCtasPerSm>::kSmemBytes;
      if (plan.splits > DecodeTraits<kHeadDim, kCtasPerSm>::kMaxSplits)
        return cudaErrorInvalidValue;
      auto* const kernel = flash3_decode_kernel<T, kHeadDim, kMTiles, kCtasPerSm>;
      static const cudaError_t attr =
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
      if (attr != cudaSuccess) return attr;
      kernel<<<grid, kDecodeThreads, kSmemBytes, f.stream>>>(map_k, map_v, p);
      return cudaGetLastError();
    };
    using One = std::integral_constant<int, 1>;
    using Two = std::integral_constant<int, 2>;
    constexpr DecodeSlots one = decode_slots(kHeadDim, 16);
    constexpr DecodeSlots two = decode_slots(kHeadDim, 32);
    if (plan.rows == 16)
      return plan.ctas_per_sm == one.deep ? launch(One{}, std::integral_constant<int, one.deep>{})
                                          : launch(One{}, std::integral_constant<int, one.wide>{});
    return plan.ctas_per_sm == two.deep ? launch(Two{}, std::integral_constant<int, two.deep>{})
                                        : launch(Two{}, std::integral_constant<int, two.wide>{});
  });
}

}  // namespace sdpa::flash3
