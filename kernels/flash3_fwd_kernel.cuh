// FlashAttention-3 design forward for sm_90a, warp-specialised. A CTA works on query tiles of
// kBlockM rows of one (batch, head): one tile per CTA, or (persistent grid) tile after tile,
// each CTA taking the next one of a global counter when it is done with the last. Warpgroup 0
// is the producer: one thread issues TMA loads of Q per tile and of K and V tiles into a ring
// of kStages shared-memory stages (full barriers count the bytes landed, empty barriers count
// the consumer threads done with a K, a V or the Q tile). Each consumer warpgroup
// owns 64 query rows: S = Q K^T with wgmma (both operands from shared memory), the online softmax
// on the fp32 accumulators in registers, P converted in registers into the A operand of
// O += P V (V read transposed from shared memory), then O normalised, staged in the warpgroup's
// rows of an O tile and written by a TMA store that clips rows past the sequence. Q has two
// slots, so the next tile's Q loads while the consumers still work on this one, and an O store
// is waited for only when the next one needs its staging rows. A persistent non-causal grid
// splits the tiles of its last round along the keys (flash3_tail_split.cuh).
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "attention_shape.h"
#include "flash3_tail_split.cuh"
#include "flash3_traits.cuh"
#include "fused_launch.cuh"
#include "mma_sm80.cuh"
#include "mma_sm90.cuh"
#include "tma_map.h"

namespace sdpa::flash3 {

using namespace sm90;
using sm80::fast_exp2;
using sm80::mask_scores;
using sm80::pack2;

// One consumer warpgroup's view of its 64 rows: the GEMM issues, the mask, the online softmax
// and the conversion of P, shared by the schedules below. Accumulator 4j + e of an m64nN tile is
// column 8j + 2t + e%2 of row row0 + (e/2)*8: the layout of m16n8 tiles.
template <typename Traits, typename T, bool kCausal>
struct ConsumerRows {
  static constexpr int D = Traits::kHeadDim;
  static constexpr int kBlockN = Traits::kBlockN;
  static constexpr int kSAcc = kBlockN / 2;  // S accumulators per thread (m64n128)
  static constexpr int kOAcc = D / 2;        // O accumulators per thread
  static constexpr int kQColBytes = Traits::kBlockM * 128;
  static constexpr int kKVColBytes = kBlockN * 128;

  uint32_t q_wg;  // the warpgroup's rows of the Q tile
  int wg_row0;
  int warp_row0;  // the first of the warp's 16 rows
  int row0;       // the thread's rows: row0 and row0 + 8
  int t;
  int seq_kv;
  float scale_log2;
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.f, 0.f};

  __device__ __forceinline__ void issue_qk(float (&acc_s)[kSAcc], uint32_t k_stage) const {
    const uint64_t q_desc = smem_descriptor(q_wg, 16, 1024);
    const uint64_t k_desc = smem_descriptor(k_stage, 16, 1024);
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks)
      wgmma_ss_n128<T>(acc_s, descriptor_at(q_desc, (ks / 4) * kQColBytes + (ks % 4) * 32),
                       descriptor_at(k_desc, (ks / 4) * kKVColBytes + (ks % 4) * 32),
                       ks > 0 ? 1 : 0);
    wgmma_commit();
  }

  __device__ __forceinline__ void issue_pv(float (&acc_o)[kOAcc],
                                           const uint32_t (&p_frag)[kBlockN / 16][4],
                                           uint32_t v_stage) const {
    const uint64_t v_desc = smem_descriptor(v_stage, kKVColBytes, 1024);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk)
      wgmma_rs<T, D>(acc_o, p_frag[kk], descriptor_at(v_desc, kk * 16 * 128), 1);
    wgmma_commit();
  }

  // Keys past the end, and causal keys after the query, score -inf; then the online softmax on
  // rows g and g + 8 (the 4 lanes of a quad share a row), S turned into unnormalised P in place.
  // alpha rescales what O holds to the new row maxima; false when no row max in the warp moved.
  __device__ __forceinline__ bool softmax(float (&acc_s)[kSAcc], int n0, float (&alpha)[2]) {
    const bool needs_mask = n0 + kBlockN > seq_kv || (kCausal && n0 + kBlockN - 1 > wg_row0);
    if constexpr (kSkipDeadKeys) {
      if (needs_mask) return softmax_rows<true>(acc_s, n0, alpha);
    } else if (needs_mask) {
      mask_scores<kCausal>(reinterpret_cast<float(&)[1][kBlockN / 8][4]>(acc_s),
                           seq_kv - n0 - 2 * t, row0 - n0 - 2 * t);
    }
    return softmax_rows<false>(acc_s, n0, alpha);
  }

  // Keys of a block that some row of the warp sees: past them every score of the warp is
  // masked, so whole groups of kGroupKeys keys get P = 0 without their exponentials (the
  // blocks on the causal diagonal and at the end of the keys). Not in the serial schedule, which
  // ran 6% slower causal with it (docs/kernel-notes.md, stage 7d); groups of 32 keys spill in
  // the three-consumer overlapped schedule.
  static constexpr bool kSkipDeadKeys = Traits::kSchedule != Flash3Schedule::serial;
  static constexpr int kGroupKeys = 64;
  static constexpr int kGroups = kBlockN / kGroupKeys;
  static constexpr int kTilesPerGroup = kGroupKeys / 8;

  // Causal key blocks, of a query tile's n_blocks, that some row of the warpgroup sees (the
  // last ones to run: the blocks run from the last to the first), and at least one.
  __device__ __forceinline__ int live_blocks(int n_blocks, int seq_q) const {
    static_assert(kCausal, "without the mask every row sees every block");
    if (wg_row0 >= seq_q) return 1;
    return min(n_blocks, (min(wg_row0 + Traits::kWGRows, seq_kv) + kBlockN - 1) / kBlockN);
  }

  __device__ __forceinline__ int warp_live_keys(int n0) const {
    int live = seq_kv - n0;
    if constexpr (kCausal) live = min(live, warp_row0 + 16 - n0);
    return static_cast<int>(warp_uniform(static_cast<uint32_t>(max(live, 0))));
  }

  // kMasked: mask the scores and skip the groups of keys the warp sees none of.
  template <bool kMasked>
  __device__ __forceinline__ bool softmax_rows(float (&acc_s)[kSAcc], int n0, float (&alpha)[2]) {
    auto& tiles = reinterpret_cast<float(&)[1][kBlockN / 8][4]>(acc_s);
    int live_keys = kBlockN;
    if constexpr (kMasked) {
      mask_scores<kCausal>(tiles, seq_kv - n0 - 2 * t, row0 - n0 - 2 * t);
      live_keys = warp_live_keys(n0);
    }
    const auto live = [&](int group) { return !kMasked || group * kGroupKeys < live_keys; };
    bool rescale = false;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      // The row's maximum and sum as trees, not chains: fewer dependent steps for a warp to
      // wait on between the exponentials.
      float part[4] = {row_max[half], -INFINITY, -INFINITY, -INFINITY};
#pragma unroll
      for (int group = 0; group < kGroups; ++group) {
        if (!live(group)) continue;
#pragma unroll
        for (int j = group * kTilesPerGroup; j < (group + 1) * kTilesPerGroup; ++j)
          part[j % 4] =
              fmaxf(part[j % 4], fmaxf(tiles[0][j][2 * half], tiles[0][j][2 * half + 1]));
      }
      float mx = fmaxf(fmaxf(part[0], part[1]), fmaxf(part[2], part[3]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      // A row with every key masked so far keeps max -inf; subtract 0 so exp2 gives 0.
      const float mx_scaled = mx == -INFINITY ? 0.f : mx * scale_log2;
      alpha[half] = fast_exp2(row_max[half] * scale_log2 - mx_scaled);
      rescale |= mx != row_max[half];
      row_max[half] = mx;
      float sum[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int group = 0; group < kGroups; ++group) {
#pragma unroll
        for (int j = group * kTilesPerGroup; j < (group + 1) * kTilesPerGroup; ++j) {
          float& s0 = tiles[0][j][2 * half];
          float& s1 = tiles[0][j][2 * half + 1];
          if (live(group)) {
            s0 = fast_exp2(fmaf(s0, scale_log2, -mx_scaled));
            s1 = fast_exp2(fmaf(s1, scale_log2, -mx_scaled));
            sum[j % 4] += s0 + s1;
          } else {
            s0 = s1 = 0.f;
          }
        }
      }
      row_sum[half] = row_sum[half] * alpha[half] + ((sum[0] + sum[1]) + (sum[2] + sum[3]));
    }
    return __any_sync(0xffffffffu, rescale);
  }

  __device__ __forceinline__ static void rescale_o(float (&acc_o)[kOAcc], const float (&alpha)[2]) {
#pragma unroll
    for (int i = 0; i < kOAcc; ++i) acc_o[i] *= alpha[(i / 2) % 2];
  }

  // P of keys 16kk..16kk+15 as the A operand of P V: the m16n8k16 A layout per warp.
  __device__ __forceinline__ static void convert_p(const float (&acc_s)[kSAcc],
                                                   uint32_t (&p_frag)[kBlockN / 16][4]) {
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        p_frag[kk][r] = pack2<T>(acc_s[8 * kk + 2 * r], acc_s[8 * kk + 2 * r + 1]);
  }
};

// The persistent grid's tile counter: tiles blockIdx.x < gridDim.x come first, then each CTA's
// producer takes the next with an atomicAdd. The last CTA to finish sets both counters back to
// zero, so the next launch (the same stream, or any later one) starts from tile gridDim.x
// again; two flash3 launches of one translation unit must not run at the same time.
static __device__ unsigned int g_tiles_taken;
static __device__ unsigned int g_ctas_done;
// Where a persistent CTA's producer leaves the index of the tile whose Q it loads next, written
// before Q's barrier arrives and read by the consumers once it has: in global memory, since a
// shared-memory word handed over on an mbarrier is reported by compute-sanitizer's racecheck,
// which does not follow mbarriers. The launcher keeps a persistent grid within the table.
inline constexpr int kNextTileSlots = 2;  // one word per Q slot
static __device__ uint32_t g_next_tile[kNextTileSlots][kMaxPersistentCtas];

template <typename Traits, typename T, bool kCausal>
__global__ void __launch_bounds__(Traits::kNThreads, 1)
    flash3_fwd_kernel(const __grid_constant__ CUtensorMap map_q,
                      const __grid_constant__ CUtensorMap map_k,
                      const __grid_constant__ CUtensorMap map_v,
                      const __grid_constant__ CUtensorMap map_o, const AttentionShape p,
                      const int heads_per_section, const TailSplit split) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Rows = ConsumerRows<Traits, T, kCausal>;
  constexpr int D = Traits::kHeadDim;
  constexpr int kBlockM = Traits::kBlockM;
  constexpr int kBlockN = Traits::kBlockN;
  constexpr int kStages = Traits::kStages;
  constexpr int kColBlocks = Traits::kColBlocks;
  constexpr int kQColBytes = Rows::kQColBytes;
  constexpr int kKVColBytes = Rows::kKVColBytes;

  extern __shared__ __align__(1024) unsigned char smem[];
  constexpr int kQSlots = Traits::kQSlots;
  static_assert(kQSlots == kNextTileSlots, "a next-tile word per Q slot");
  // Q's slots, O's staging tile, the K and V rings, then the barriers.
  const uint32_t s_q = (shared_address(smem) + 1023) & ~1023u;
  const uint32_t s_o = s_q + kQSlots * Traits::kQBytes;
  const uint32_t s_k = s_o + Traits::kQBytes;
  const uint32_t s_v = s_k + kStages * Traits::kTileBytes;
  const uint32_t bars = s_v + kStages * Traits::kTileBytes;
  const auto bar_q_full = [&](int slot) { return bars + 8 * slot; };
  const auto bar_q_empty = [&](int slot) { return bars + 8 * (kQSlots + slot); };
  constexpr int kRingBars = 2 * kQSlots;  // the ring's barriers follow Q's
  const auto bar_k_full = [&](int s) { return bars + 8 * (kRingBars + s); };
  const auto bar_v_full = [&](int s) { return bars + 8 * (kRingBars + kStages + s); };
  const auto bar_k_empty = [&](int s) { return bars + 8 * (kRingBars + 2 * kStages + s); };
  const auto bar_v_empty = [&](int s) { return bars + 8 * (kRingBars + 3 * kStages + s); };
  // Tile t of a CTA uses Q slot t % kQSlots, whose barriers are in their (t / kQSlots)-th phase.
  const auto q_slot = [](int t) { return t % kQSlots; };
  const auto q_parity = [](int t) { return static_cast<uint32_t>((t / kQSlots) & 1); };

  const int seq_q = static_cast<int>(p.seq_q);
  const int seq_kv = static_cast<int>(p.seq_kv);
  const int64_t q_heads = p.batch * p.heads;
  const int64_t m_blocks = (p.seq_q + kBlockM - 1) / kBlockM;
  const int64_t n_tiles = m_blocks * q_heads;
  const int64_t group = p.heads / p.kv_heads;
  // The tiles that run at the same time should read the same K and V, from L2: the tile list is
  // cut into sections of heads_per_section heads (whole groups of query heads, whose K and V fit
  // in part of the L2; section_heads() below), and inside a section the query blocks come
  // heaviest causal block first, the section's heads side by side. A grid of one CTA per tile
  // runs them in that order, and so does a persistent grid, taking them from the counter.
  // A unit of work: a tile, or (tail_split.cuh) its key blocks first_block ..
  // first_block + n_blocks - 1 when it is part split_slot of a split tile of the last round.
  struct Tile {
    int m0;
    int bh_q;
    int bh_kv;
    int n_blocks;
    int first_block = 0;
    int split_slot = -1;
  };
  const int64_t n_units =
      n_tiles + (split.splits > 1 ? (n_tiles - split.first_unit) * (split.splits - 1) : 0);
  const bool take_tiles = gridDim.x < n_units;
  constexpr uint32_t kNoTile = 0xFFFFFFFFu;  // >= n_units (at most INT32_MAX)
  // 32-bit index arithmetic (the launcher keeps n_tiles under 2^31): the producer runs it with
  // the few registers it keeps.
  const auto tile_at = [&](int64_t index) {
    const auto i = static_cast<uint32_t>(index);
    const auto heads = static_cast<uint32_t>(q_heads);
    const auto section_heads = static_cast<uint32_t>(heads_per_section);
    const uint32_t section_tiles = section_heads * static_cast<uint32_t>(m_blocks);
    const uint32_t first_head = i / section_tiles * section_heads;
    const uint32_t in_section = i % section_tiles;
    const uint32_t width = min(section_heads, heads - first_head);
    const uint32_t bh = first_head + in_section % width;
    const int m0 =
        (static_cast<int>(m_blocks) - 1 - static_cast<int>(in_section / width)) * kBlockM;
    const int kv_end = kCausal ? min(seq_kv, m0 + kBlockM) : seq_kv;
    const auto per_batch = static_cast<uint32_t>(p.heads);
    return Tile{m0, static_cast<int>(bh),
                static_cast<int>((bh / per_batch) * static_cast<uint32_t>(p.kv_heads) +
                                 (bh % per_batch) / static_cast<uint32_t>(group)),
                (kv_end + kBlockN - 1) / kBlockN};
  };
  constexpr bool kSplitsTail = !kCausal;
  const auto unit_at = [&](int64_t index) {
    if constexpr (!kSplitsTail) return tile_at(index);
    const auto u = static_cast<uint32_t>(index);
    const auto first = static_cast<uint32_t>(split.first_unit);
    if (split.splits == 1 || u < first) return tile_at(index);
    const uint32_t in_tail = u - first;
    const auto ways = static_cast<uint32_t>(split.splits);
    Tile tile = tile_at(first + in_tail / ways);
    const uint32_t piece = in_tail % ways;
    const auto blocks = static_cast<uint32_t>(tile.n_blocks);
    tile.first_block = static_cast<int>(piece * blocks / ways);
    tile.n_blocks = static_cast<int>((piece + 1) * blocks / ways) - tile.first_block;
    tile.split_slot = static_cast<int>(in_tail);
    return tile;
  };

  const int tid = static_cast<int>(threadIdx.x);
  const int wg = tid / 128;
  if (tid == 0) {
    constexpr int kConsumers = Traits::kConsumerWGs * 128;  // one arrival each on an empty
    for (int slot = 0; slot < kQSlots; ++slot) {
      mbarrier_init(bar_q_full(slot), 1);
      mbarrier_init(bar_q_empty(slot), kConsumers);
    }
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(bar_k_full(s), 1);
      mbarrier_init(bar_v_full(s), 1);
      mbarrier_init(bar_k_empty(s), kConsumers);
      mbarrier_init(bar_v_empty(s), kConsumers);
    }
    mbarrier_init_fence();
  }
  __syncthreads();

  // Key blocks run from the last to the first, so the masked ones (the causal diagonal, the
  // end of the keys) come first; the producer loads them in the same order.
  if (wg == 0) {
    lower_registers<Traits::kProducerRegs>();
    if (tid == 0) {
      // The ring runs on across tiles: `load` counts the key blocks loaded by this CTA.
      int load = 0;
      int tile_count = 0;
      // Q of a tile first: its slot was handed back after the tile before the last one, so the
      // load starts as soon as the producer takes the tile, a few key blocks before the
      // consumers finish the current one.
      const auto load_q = [&](int64_t i, const Tile& tile) {
        const int slot = q_slot(tile_count);
        mbarrier_wait_idle(bar_q_empty(slot), q_parity(tile_count) ^ 1);
        if (take_tiles) g_next_tile[slot][blockIdx.x] = static_cast<uint32_t>(i);
        mbarrier_arrive_expect_tx(bar_q_full(slot), Traits::kQBytes);
#pragma unroll
        for (int c = 0; c < kColBlocks; ++c)
          tma_load_3d(s_q + slot * Traits::kQBytes + c * kQColBytes, &map_q, bar_q_full(slot),
                      c * 64, tile.m0, tile.bh_q);
      };
      for (int64_t i = blockIdx.x; i < n_units; ++tile_count) {
        const Tile tile = unit_at(i);
        load_q(i, tile);
        for (int it = 0; it < tile.n_blocks; ++it, ++load) {
          const int s = load % kStages;
          const uint32_t free_parity = ((load / kStages) & 1) ^ 1;
          const int n0 = (tile.first_block + tile.n_blocks - 1 - it) * kBlockN;
          // Once stage s of K (or V) is free: its bytes announced, then one copy per column block.
          const auto load_stage = [&](const CUtensorMap* map, uint32_t ring, uint32_t empty,
                                      uint32_t full) {
            mbarrier_wait_idle(empty, free_parity);
            mbarrier_arrive_expect_tx(full, Traits::kTileBytes);
#pragma unroll
            for (int c = 0; c < kColBlocks; ++c)
              tma_load_3d(ring + s * Traits::kTileBytes + c * kKVColBytes, map, full, c * 64, n0,
                          tile.bh_kv);
          };
          load_stage(&map_k, s_k, bar_k_empty(s), bar_k_full(s));
          load_stage(&map_v, s_v, bar_v_empty(s), bar_v_full(s));
        }
        i = take_tiles ? gridDim.x + atomicAdd(&g_tiles_taken, 1u) : n_units;
      }
      // The consumers wait for one more Q: there is none.
      const int slot = q_slot(tile_count);
      mbarrier_wait_idle(bar_q_empty(slot), q_parity(tile_count) ^ 1);
      if (take_tiles) g_next_tile[slot][blockIdx.x] = kNoTile;
      mbarrier_arrive(bar_q_full(slot));
      if (take_tiles) {
        __threadfence();  // this CTA's last atomicAdd on the tile counter lands first
        if (atomicAdd(&g_ctas_done, 1u) == gridDim.x - 1) {
          atomicExch(&g_tiles_taken, 0u);
          atomicExch(&g_ctas_done, 0u);
        }
      }
    }
    return;
  }

  raise_registers<Traits::kConsumerRegs>();
  // The consumer warpgroup, and below the tile, warp-uniform: the descriptors and stage
  // addresses made from them stay in uniform registers.
  const int cw = static_cast<int>(warp_uniform(static_cast<uint32_t>(wg))) - 1;
  const int tw = tid % 128;
  const int warp = tw / 32;
  const int lane = tid % 32;
  const int g = lane / 4;  // accumulator row within the warp's 16 (and g + 8)
  const int t = lane % 4;  // accumulator column pair
  // `used` counts the key blocks this CTA consumed in earlier tiles: the ring's position.
  uint32_t used = 0;
  for (int tile_count = 0;; ++tile_count) {
    const int slot = q_slot(tile_count);
    mbarrier_wait(bar_q_full(slot), q_parity(tile_count));
    // Without taking tiles, a CTA runs the one tile of its index.
    const int64_t i =
        take_tiles ? warp_uniform(load_relaxed_cta(&g_next_tile[slot][blockIdx.x]))
                   : (tile_count == 0 ? static_cast<int64_t>(blockIdx.x) : n_units);
    if (i >= n_units) break;
    const Tile tile = unit_at(i);
    int n_blocks = tile.n_blocks;
    Rows rows{.q_wg = s_q + slot * Traits::kQBytes + cw * Traits::kWGRows * 128,
              .wg_row0 = tile.m0 + cw * Traits::kWGRows,
              .warp_row0 = tile.m0 + cw * Traits::kWGRows + warp * 16,
              .row0 = tile.m0 + cw * Traits::kWGRows + warp * 16 + g,
              .t = t,
              .seq_kv = seq_kv,
              .scale_log2 = p.scale * 1.4426950408889634f};

    float acc_o[Rows::kOAcc];
#pragma unroll
    for (int j = 0; j < Rows::kOAcc; ++j) acc_o[j] = 0.f;
    float acc_s[Rows::kSAcc];
    uint32_t p_frag[kBlockN / 16][4];
    float alpha[2];
    const auto stage_of = [&](int it) {
      return static_cast<int>((used + static_cast<uint32_t>(it)) % kStages);
    };
    const auto parity_of = [&](int it) {
      return ((used + static_cast<uint32_t>(it)) / kStages) & 1;
    };
    const auto block_start = [&](int it) {
      return (tile.first_block + n_blocks - 1 - it) * kBlockN;
    };
    // Every consumer thread hands a K or V stage back once its MMAs on it are complete, and Q
    // after the tile's last Q K^T (the last key block, it == n_blocks - 1).
    const auto hand_back = [&](uint32_t bar) { mbarrier_arrive(bar); };
    const auto release_k = [&](int it) {
      hand_back(bar_k_empty(stage_of(it)));
      if (it == n_blocks - 1) hand_back(bar_q_empty(slot));
    };
    const auto release_v = [&](int it) { hand_back(bar_v_empty(stage_of(it))); };

    // Causal tiles taller than a key block: the leading key blocks none of the warpgroup's rows
    // sees (blocks above its rows, and for rows past seq_q all but the last) are waited for, so
    // that the arrivals on their empty barriers count toward the right phase, and handed back
    // without MMAs; the schedules below run on the rest as if the tile had only those. Not
    // under ping-pong, whose two warpgroups take the same number of turns; not where only rows
    // past seq_q would gain: without the mask the three-consumer overlapped schedule spills 12
    // bytes with it, and with kBlockM == kBlockN the D128 causal one ran 1.6% slower.
    constexpr bool kPingPong = Traits::kSchedule == Flash3Schedule::pingpong;
    constexpr bool kSkipDeadBlocks = kCausal && !kPingPong && kBlockM > kBlockN;
    int dead = 0;
    if constexpr (kSkipDeadBlocks) dead = n_blocks - rows.live_blocks(n_blocks, seq_q);
    for (int it = 0; it < dead; ++it) {
      mbarrier_wait(bar_k_full(stage_of(it)), parity_of(it));
      hand_back(bar_k_empty(stage_of(it)));
      mbarrier_wait(bar_v_full(stage_of(it)), parity_of(it));
      hand_back(bar_v_empty(stage_of(it)));
    }
    used += static_cast<uint32_t>(dead);
    n_blocks -= dead;

    if constexpr (Traits::kSchedule == Flash3Schedule::serial) {
      // Stage 1: each block's S = Q K^T, softmax and O += P V one after the other.
      for (int it = 0; it < n_blocks; ++it) {
        const int s = stage_of(it);
        mbarrier_wait(bar_k_full(s), parity_of(it));
        rows.issue_qk(acc_s, s_k + s * Traits::kTileBytes);
        wgmma_wait<0>();
        fence_registers(acc_s);
        if (rows.softmax(acc_s, block_start(it), alpha)) Rows::rescale_o(acc_o, alpha);
        Rows::convert_p(acc_s, p_frag);
        release_k(it);
        mbarrier_wait(bar_v_full(s), parity_of(it));
        fence_registers(acc_o);
        rows.issue_pv(acc_o, p_frag, s_v + s * Traits::kTileBytes);
        wgmma_wait<0>();
        fence_registers(acc_o);
        release_v(it);
      }
    } else {
      // Stage 2: block it's S = Q K^T is issued together with block it-1's O += P V, and its
      // softmax runs while that P V is still on the tensor cores. With ping-pong, the two
      // consumer warpgroups also take turns to issue, so one's softmax runs under the other's
      // GEMMs: turn k of warpgroup 0, then turn k of warpgroup 1, then turn k + 1 of 0, ...
      static_assert(!kPingPong || Traits::kConsumerWGs == 2, "ping-pong takes turns between two");
      constexpr int kTurnBarrier = 1 + Traits::kConsumerWGs;  // after the epilogue's barriers
      const int turns = n_blocks + 1;
      const auto begin_turn = [&](int k) {
        if (kPingPong && (cw == 1 || k > 0)) named_barrier_sync(kTurnBarrier + cw, 256);
      };
      const auto end_turn = [&](int k) {
        if (kPingPong && (cw == 0 || k < turns - 1))
          named_barrier_arrive(kTurnBarrier + (1 - cw), 256);
      };
      mbarrier_wait(bar_k_full(stage_of(0)), parity_of(0));
      begin_turn(0);
      rows.issue_qk(acc_s, s_k + stage_of(0) * Traits::kTileBytes);
      end_turn(0);
      wgmma_wait<0>();
      fence_registers(acc_s);
      release_k(0);
      rows.softmax(acc_s, block_start(0), alpha);  // O is still zero: nothing to rescale
      Rows::convert_p(acc_s, p_frag);
      for (int it = 1; it < n_blocks; ++it) {
        const int s = stage_of(it);
        const int prev = stage_of(it - 1);
        mbarrier_wait(bar_k_full(s), parity_of(it));
        mbarrier_wait(bar_v_full(prev), parity_of(it - 1));
        begin_turn(it);
        rows.issue_qk(acc_s, s_k + s * Traits::kTileBytes);
        fence_registers(acc_o);
        rows.issue_pv(acc_o, p_frag, s_v + prev * Traits::kTileBytes);
        end_turn(it);
        wgmma_wait<1>();  // S of block it has landed; P V of block it-1 may still run
        fence_registers(acc_s);
        release_k(it);
        const bool rescale = rows.softmax(acc_s, block_start(it), alpha);
        wgmma_wait<0>();
        fence_registers(acc_o);
        fence_registers(p_frag);
        release_v(it - 1);
        if (rescale) Rows::rescale_o(acc_o, alpha);
        Rows::convert_p(acc_s, p_frag);
      }
      const int last = n_blocks - 1;
      mbarrier_wait(bar_v_full(stage_of(last)), parity_of(last));
      begin_turn(n_blocks);
      fence_registers(acc_o);
      rows.issue_pv(acc_o, p_frag, s_v + stage_of(last) * Traits::kTileBytes);
      end_turn(n_blocks);
      wgmma_wait<0>();
      fence_registers(acc_o);
      release_v(last);
    }

    used += static_cast<uint32_t>(n_blocks);

    // Epilogue: normalise, stage the warpgroup's rows in its rows of the O tile (once the last
    // tile's store has read them) in the swizzled layout of the O map, then one TMA store per
    // column block; rows past seq_q fall outside the map and are not written. A part of a split
    // tile goes to the workspace instead, and the last part's warps write O.
    float row_sum[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float sum = rows.row_sum[half];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      row_sum[half] = sum;
    }
    if constexpr (kSplitsTail) {
      if (tile.split_slot >= 0) {
        finish_split_unit<T, Traits::kConsumerWGs>(split, tile.split_slot, cw, tw, acc_o,
                                                   rows.row_max, row_sum, rows.scale_log2,
                                                   tile.bh_q, seq_q, rows.row0, t);
        continue;
      }
    }
    const uint32_t o_wg = s_o + cw * Traits::kWGRows * 128;
    float inv[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) inv[half] = row_sum[half] > 0.f ? 1.f / row_sum[half] : 0.f;
    if (tile_count > 0) {
      if (tw == 0) tma_store_wait_read();
      named_barrier_sync(1 + cw, 128);
    }
    // With three consumers the staging addresses, hoisted out of the tile loop, were spilled
    // across it once the split's combine was there too: they are made anew for each tile.
    int g_o = g;
    int t_o = t;
    if constexpr (Traits::kConsumerWGs == 3) {
      const int lane_o = static_cast<int>(lane_id_here());
      g_o = lane_o / 4;
      t_o = lane_o % 4;
    }
#pragma unroll
    for (int j = 0; j < D / 8; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = warp * 16 + g_o + half * 8;  // row % 8 == g
        const uint32_t addr = o_wg + (j / 8) * kQColBytes + row * 128 +
                              (((j % 8) ^ g_o) * 16) + t_o * 4;
        store_shared_u32(addr, pack2<T>(acc_o[4 * j + 2 * half] * inv[half],
                                        acc_o[4 * j + 2 * half + 1] * inv[half]));
      }
    fence_async_shared();
    named_barrier_sync(1 + cw, 128);
    if (tw == 0 && rows.wg_row0 < seq_q) {
#pragma unroll
      for (int c = 0; c < kColBlocks; ++c)
        tma_store_3d(&map_o, o_wg + c * kQColBytes, c * 64, rows.wg_row0,
                     tile.bh_q);
      tma_store_commit();
    }
  }
  if (tw == 0) tma_store_wait_read();  // the staging rows stay valid until the store has read them
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
  if (plan.splits > 1 &&
      (f.workspace == nullptr ||
       f.workspace_bytes < tail_split_layout(max_grid, Traits::kBlockM, kHeadDim).total()))
    return cudaErrorInvalidValue;  // less than the kernel's workspace_bytes() asks for
  const TailSplit split =
      tail_split_in(f.workspace, f.o, plan, max_grid, Traits::kBlockM, kHeadDim);
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
        map_q, map_k, map_v, map_o, s, section_heads(s, sizeof(T), l2_bytes), split);
    return cudaGetLastError();
  });
}

}  // namespace sdpa::flash3
