// The flash3 tile scheduler: which query tile (or, for a split tile of a persistent grid's last
// round, which part of its key blocks) each CTA works on, in what order, and how a persistent
// CTA takes its next one.
//
// Order: the tiles that run at the same time should read the same K and V, from L2. The tile
// list is cut into sections of heads_per_section heads (whole groups of query heads, whose K and
// V fit in part of the L2: section_heads() in flash3_fwd_kernel.cuh), and inside a section the
// query blocks come heaviest causal block first, the section's heads side by side. A grid of one
// CTA per tile runs them in that order, and so does a persistent grid, taking them from the
// tile queue in its workspace (flash3_tile_queue.h).
#pragma once

#include <cstdint>

#include "attention_shape.h"
#include "flash3_tail_plan.h"
#include "flash3_tile_queue.h"
#include "flash3_traits.cuh"
#include "mma_sm90.cuh"

namespace sdpa::flash3 {

template <typename Traits, bool kCausal>
struct Flash3TileScheduler {
  static constexpr int kBlockM = Traits::kBlockM;
  static constexpr int kBlockN = Traits::kBlockN;
  static_assert(Traits::kQSlots == kNextTileSlots, "a next-tile word per Q slot");
  // Only non-causal tiles split: causal ones come heaviest first, so their last round is light.
  static constexpr bool kSplitsTail = !kCausal;
  static constexpr uint32_t kNoTile = 0xFFFFFFFFu;  // >= n_units (at most INT32_MAX)

  // A unit of work: a tile, or its key blocks first_block .. first_block + n_blocks - 1 when it
  // is part split_slot of a split tile of the last round (flash3_tail_split.cuh).
  struct Tile {
    int m0;
    int bh_q;
    int bh_kv;
    int n_blocks;
    int first_block = 0;
    int split_slot = -1;
  };

  const AttentionShape& p;
  int heads_per_section;
  TailSplit split;
  TileQueue queue;
  int seq_kv;
  int64_t q_heads;
  int64_t m_blocks;
  int64_t n_tiles;
  int64_t group;
  int64_t n_units;
  bool take_tiles;  // a persistent grid: fewer CTAs than units

  __device__ __forceinline__ Flash3TileScheduler(const AttentionShape& shape, int section,
                                                 const TailSplit& s, const TileQueue& q)
      : p(shape),
        heads_per_section(section),
        split(s),
        queue(q),
        seq_kv(static_cast<int>(shape.seq_kv)),
        q_heads(shape.batch * shape.heads),
        m_blocks((shape.seq_q + kBlockM - 1) / kBlockM),
        n_tiles(m_blocks * q_heads),
        group(shape.heads / shape.kv_heads),
        n_units(n_tiles + (s.splits > 1 ? (n_tiles - s.first_unit) * (s.splits - 1) : 0)),
        take_tiles(gridDim.x < n_units) {}

  // 32-bit index arithmetic (the launcher keeps n_tiles under 2^31): the producer runs it with
  // the few registers it keeps.
  __device__ __forceinline__ Tile tile_at(int64_t index) const {
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
  }

  __device__ __forceinline__ Tile unit_at(int64_t index) const {
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
  }

  // The producer's side: the CTA's first unit, and the one after `i`.
  __device__ __forceinline__ int64_t first() const { return blockIdx.x; }
  __device__ __forceinline__ int64_t next() const {
    return take_tiles ? gridDim.x + atomicAdd(queue.taken, 1u) : n_units;
  }
  // The producer passes the unit whose Q lands in `slot` to the consumers (kNoTile: none left).
  __device__ __forceinline__ void publish(int slot, uint32_t index) const {
    if (take_tiles) queue.next_tile[slot][blockIdx.x] = index;
  }
  // The consumers' side, once Q's barrier of the CTA's tile_count-th unit has completed:
  // without taking tiles, a CTA runs the one unit of its index.
  __device__ __forceinline__ int64_t published(int slot, int tile_count) const {
    return take_tiles
               ? sm90::warp_uniform(sm90::load_relaxed_cta(&queue.next_tile[slot][blockIdx.x]))
               : (tile_count == 0 ? static_cast<int64_t>(blockIdx.x) : n_units);
  }
  // The producer, after its last unit: the last CTA to finish sets the counters back to zero.
  __device__ __forceinline__ void finish() const {
    if (!take_tiles) return;
    __threadfence();  // this CTA's last atomicAdd on the tile counter lands first
    if (atomicAdd(queue.done, 1u) == gridDim.x - 1) {
      atomicExch(queue.taken, 0u);
      atomicExch(queue.done, 0u);
    }
  }
};

}  // namespace sdpa::flash3
