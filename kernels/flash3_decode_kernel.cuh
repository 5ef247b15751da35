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
// - K and V stream through a kStages-deep ring of swizzled tiles, stored as TMA's 128-byte swizzle
//   lays out 64-column boxes: as TMA boxes (kTmaKv, where plan_decode chooses it: one mbarrier a
//   stage, the ring refilled as soon as every warp is past a block, so kStages blocks are in
//   flight while a CTA waits), else by cp.async (kStages - 1 in flight);
// - mma.sync m16n8k16 and ldmatrix as in the flash kernel (mma_sm80.cuh), which Hopper runs too.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <climits>
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

// map_k and map_v (kTmaKv; unused otherwise): K and V in boxes of 64 columns and kDecodeBlockN
// rows, a contiguous cache as {D, Skv, B * Hkv}, a page pool as {D, page_size, pool_pages * Hkv}.
template <typename T, int kHeadDim, int kMTiles, int kCtasPerSm, bool kTmaKv>
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
  constexpr int kKvPasses = kDecodeBlockN / kRowsPerPass;
  static_assert(kRows % kRowsPerPass == 0 && kDecodeBlockN % kRowsPerPass == 0,
                "whole cp.async passes");
  static_assert(kRowsPerPass % 8 == 0, "a thread's swizzle phase stays the same between passes");
  static_assert(kDecodeBlockN == 16 * kDecodeWarps, "each warp owns 16 keys of a block");

  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // TMA's 128-byte swizzle starts its 8-row atoms 1024-aligned (kAlignBytes of room for this).
  const uint32_t raw = shared_address(smem_raw);
  const uint32_t s_q = (raw + Traits::kAlignBytes - 1) & ~uint32_t{Traits::kAlignBytes - 1};
  unsigned char* const smem = smem_raw + (s_q - raw);

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
  const T* const k = static_cast<const T*>(p.k);
  const T* const v = static_cast<const T*>(p.v);
  const int first_block = split * p.blocks_per_split;
  const int n_blocks = min(p.blocks_per_split, p.n_blocks - first_block);

  const uint32_t s_kv = s_q + Traits::kQBytes;
  const uint32_t s_full = s_q + Traits::kBarrierOffset;  // kTmaKv: a barrier a stage

  // cp.async: consecutive threads copy consecutive 16-byte chunks of a row, chunk c in half c / 8.
  const int tid = static_cast<int>(threadIdx.x);
  const int ld_row = tid / kChunksPerRow;
  const int ld_chunk = tid % kChunksPerRow;
  const uint32_t ld_row_offset = ld_row * kRowBytes + (((ld_chunk % 8) ^ (ld_row & 7)) * 16);
  const uint32_t ld_q = (ld_chunk / 8) * Traits::kQHalfBytes + ld_row_offset;
  const uint32_t ld_kv = (ld_chunk / 8) * Traits::kTileHalfBytes + ld_row_offset;

#pragma unroll
  for (int pass = 0; pass < kRows / kRowsPerPass; ++pass) {
    const int r = ld_row + pass * kRowsPerPass;
    const bool valid = r < valid_rows;
    cp_async_16(s_q + ld_q + pass * kRowsPerPass * kRowBytes,
                q + (valid ? r * D + ld_chunk * 8 : 0), valid);
  }
  // A paged cache: the pool pages of key block nb (counted in the split), looked up a block before
  // find_kv_rows needs them, so that a table lookup has a whole block's compute to return in, not
  // one wait. Pages smaller than a block: the page of each of the thread's rows, or -1 past the
  // visible keys; pages of whole blocks: the block's page, in pg[0].
  using KvPages = int32_t[kKvPasses];
  const bool paged = p.kv.block_table != nullptr;
  auto find_pages = [&](int nb, KvPages& pg) {
    const int n0 = (first_block + nb) * kDecodeBlockN;
    if (!p.kv.small_pages()) {
      pg[0] = p.kv.block_page(b, n0);
      return;
    }
#pragma unroll
    for (int pass = 0; pass < kKvPasses; ++pass) {
      const int key = n0 + ld_row + pass * kRowsPerPass;
      pg[pass] = key < p.visible_keys ? p.kv.small_page(b, key) : -1;
    }
  };
  // Where the thread's rows of key block nb lie in K and V, or -1 past the visible keys
  // (zero-filled), from find_pages' `pg` where the cache is paged. Found before the wait for the
  // block ahead of it.
  using KvRows = int64_t[kKvPasses];
  auto find_kv_rows = [&](int nb, KvRows& at, const KvPages& pg) {
    const int n0 = (first_block + nb) * kDecodeBlockN;
    const bool small_pages = p.kv.small_pages();
    const int64_t block = small_pages ? 0
                          : paged     ? p.kv.block_row(pg[0], h, n0)
                                      : p.kv.block_offset(b, h, n0);
#pragma unroll
    for (int pass = 0; pass < kKvPasses; ++pass) {
      const int r = ld_row + pass * kRowsPerPass;
      at[pass] = -1;
      if (small_pages) {
        if (pg[pass] >= 0) at[pass] = p.kv.small_page_row(pg[pass], h, n0 + r) + ld_chunk * 8;
      } else if (n0 + r < p.visible_keys) {
        at[pass] = block + r * p.kv.row_stride + ld_chunk * 8;
      }
    }
  };
  auto load_kv = [&](const KvRows& at, int stage) {
    const uint32_t s_k = s_kv + stage * Traits::kStageBytes + ld_kv;
    const uint32_t s_v = s_k + Traits::kTileBytes;
#pragma unroll
    for (int pass = 0; pass < kKvPasses; ++pass) {
      const bool valid = at[pass] >= 0;
      cp_async_16(s_k + pass * kRowsPerPass * kRowBytes, k + (valid ? at[pass] : 0), valid);
      cp_async_16(s_v + pass * kRowsPerPass * kRowBytes, v + (valid ? at[pass] : 0), valid);
    }
  };

  // kTmaKv: where block nb of the split starts in the maps (x: row, y: head), found by thread 0
  // ahead of the barrier before its load, so that a page lookup overlaps the wait; then its load
  // into `stage`, K and V a box per 64-column half.
  auto find_box = [&](int nb) {
    const int n0 = (first_block + nb) * kDecodeBlockN;
    if (p.kv.block_table == nullptr) return int2{n0, b * p.kv_heads + h};
    return int2{n0 % p.kv.page_size, p.kv.block_page(b, n0) * p.kv_heads + h};
  };
  auto load_boxes = [&](int2 box, int stage) {
    const uint32_t full = s_full + 8 * stage;
    sm90::mbarrier_arrive_expect_tx(full, Traits::kStageBytes);
    const uint32_t s_k = s_kv + stage * Traits::kStageBytes;
#pragma unroll
    for (int half = 0; half < Traits::kHalves; ++half) {
      const uint32_t at = s_k + half * Traits::kTileHalfBytes;
      sm90::tma_load_3d(at, &map_k, full, half * 64, box.x, box.y);
      sm90::tma_load_3d(at + Traits::kTileBytes, &map_v, full, half * 64, box.x, box.y);
    }
  };

  KvRows rows_ahead;
  KvPages pages_ahead{};
  if constexpr (kTmaKv) {
    // Every stage filled at once; the other warps first touch the barriers after the main loop's
    // first __syncthreads.
    cp_async_commit();  // Q alone
    if (tid == 0) {
      int2 first[Traits::kStages]{};
#pragma unroll
      for (int s = 0; s < Traits::kStages; ++s)
        if (s < n_blocks) first[s] = find_box(s);
#pragma unroll
      for (int s = 0; s < Traits::kStages; ++s) sm90::mbarrier_init(s_full + 8 * s, 1);
      sm90::mbarrier_init_fence();
#pragma unroll
      for (int s = 0; s < Traits::kStages; ++s)
        if (s < n_blocks) load_boxes(first[s], s);
    }
  } else {
    // Groups in flight: {Q, block 0}, then one per block up to kStages - 1 ahead.
#pragma unroll
    for (int s = 0; s < Traits::kStages - 1; ++s) {
      if (s < n_blocks) {
        if (paged) find_pages(s, pages_ahead);
        find_kv_rows(s, rows_ahead, pages_ahead);
        load_kv(rows_ahead, s);
      }
      cp_async_commit();
    }
    if (paged && Traits::kStages - 1 < n_blocks) find_pages(Traits::kStages - 1, pages_ahead);
  }

  const int warp = tid / 32;
  const int lane = tid % 32;
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

  if constexpr (kTmaKv) cp_async_wait<0>();  // Q; the loop's first barrier shows it to all
  int stage = 0;
  uint32_t phase = 0;  // kTmaKv: the parity of the stage's current fill
  for (int nb = 0; nb < n_blocks; ++nb) {
    // Block `ahead` goes into nb - 1's stage, free once every warp is done with it.
    const int ahead = nb + Traits::kStages - 1;
    const int free_stage = stage == 0 ? Traits::kStages - 1 : stage - 1;
    if constexpr (kTmaKv) {
      const bool load_ahead = tid == 0 && nb > 0 && ahead < n_blocks;
      int2 box{};
      if (load_ahead) box = find_box(ahead);
      __syncthreads();
      if (load_ahead) load_boxes(box, free_stage);
      sm90::mbarrier_wait(s_full + 8 * stage, phase);  // block nb landed
    } else {
      if (ahead < n_blocks) {
        find_kv_rows(ahead, rows_ahead, pages_ahead);
        if (paged && ahead + 1 < n_blocks) find_pages(ahead + 1, pages_ahead);
      }
      cp_async_wait<Traits::kStages - 2>();  // block nb landed
      __syncthreads();  // ... for every thread, and every warp is done with nb - 1
      if (ahead < n_blocks) load_kv(rows_ahead, free_stage);
      cp_async_commit();
    }
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
  if constexpr (!kTmaKv) cp_async_wait<0>();
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
// pages are of a size the kernel cannot read (or by TMA, pages that do not hold whole blocks),
// the driver refuses a TMA map, or the plan splits into more parts than the chosen kernel's
// combine holds.
template <int kHeadDim>
cudaError_t launch_flash3_decode_hdim(const FusedForward& f, const DecodePlan& plan) {
  DecodeParams p{};
  p.q = f.q;
  p.o = f.o;
  if (f.paged != nullptr) {
    if (!paged_kv_address(*f.paged, p.kv)) return cudaErrorInvalidValue;
    p.k = f.paged->k_pool;
    p.v = f.paged->v_pool;
  } else {
    p.kv = contiguous_kv_address(f.shape);
    p.k = f.k;
    p.v = f.v;
  }
  // kTmaKv: K and V as TMA maps over the contiguous [B * Hkv, Skv, D], or over the pools'
  // [pool_pages * Hkv, page_size, D] where a page holds whole blocks.
  CUtensorMap map_k{};
  CUtensorMap map_v{};
  if (plan.tma_kv) {
    const bool paged = f.paged != nullptr;
    if (paged && f.paged->layout.page_size % kDecodeBlockN != 0) return cudaErrorInvalidValue;
    const int64_t heads = (paged ? f.paged->layout.pool_pages : f.shape.batch) * f.shape.kv_heads;
    const int64_t rows = paged ? f.paged->layout.page_size : f.shape.seq_kv;
    if (heads > INT32_MAX || rows > INT32_MAX) return cudaErrorInvalidValue;  // int coordinates
    for (const auto& [map, base] : {std::pair{&map_k, p.k}, std::pair{&map_v, p.v}})
      if (const cudaError_t e =
              encode_head_major_map(*map, base, f.dtype, heads, rows, kHeadDim, kDecodeBlockN);
          e != cudaSuccess)
        return e;
  }
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
    const auto launch_kernel = [&](auto tiles, auto ctas, auto tma) {
      constexpr int kMTiles = decltype(tiles)::value;
      constexpr int kCtasPerSm = decltype(ctas)::value;
      constexpr int kSmemBytes = DecodeTraits<kHeadDim, kCtasPerSm>::kSmemBytes;
      if (plan.splits > DecodeTraits<kHeadDim, kCtasPerSm>::kMaxSplits)
        return cudaErrorInvalidValue;
      auto* const kernel =
          flash3_decode_kernel<T, kHeadDim, kMTiles, kCtasPerSm, decltype(tma)::value>;
      static const cudaError_t attr =
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
      if (attr != cudaSuccess) return attr;
      kernel<<<grid, kDecodeThreads, kSmemBytes, f.stream>>>(map_k, map_v, p);
      return cudaGetLastError();
    };
    const auto launch = [&](auto tiles, auto ctas) {
      return plan.tma_kv ? launch_kernel(tiles, ctas, std::true_type{})
                         : launch_kernel(tiles, ctas, std::false_type{});
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
