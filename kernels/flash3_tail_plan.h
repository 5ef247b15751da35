// How a persistent flash3 launch splits the tiles of its last round along the keys
// (flash3_tail_split.cuh has why and the device side), and the workspace that takes: host code,
// the launcher's and the unit tests'.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "attention_shape.h"

namespace sdpa::flash3 {

// A unit keeps at least this many key blocks (its prologue and epilogue against its MMAs), and a
// tile is split at most this many ways (the combine reads every unit's O).
inline constexpr int kMinSplitBlocks = 4;
inline constexpr int kMaxSplits = 16;

// What a launch splits, and where its units leave their parts: one unit per part slot, the last
// round's tiles each `splits` units from unit index `first_unit` on.
struct TailSplit {
  float4* partial_o = nullptr;  // [slot][warpgroup][accumulator / 4][thread of the warpgroup]
  float4* stats = nullptr;      // [slot][warpgroup][thread]: max and sum of its rows g, g + 8
  unsigned* arrivals = nullptr;  // [tile of the last round][warp]: units done, back to 0 at the end
  void* o = nullptr;             // O itself, [B, Hq, Sq, D], for the combined rows
  int first_unit = 0;
  int splits = 1;  // 1: no tile is split
};

// Tiles the last round of n_tiles on `grid` CTAs runs: 1 .. grid.
inline int64_t last_round_tiles(int64_t n_tiles, int64_t grid) {
  return n_tiles - (n_tiles - 1) / grid * grid;
}

// Units a tile of the last round becomes (1: none split) for n_tiles tiles of n_blocks key blocks
// on a persistent grid of at most `grid` CTAs.
inline int tail_splits(int64_t n_tiles, int64_t grid, int n_blocks, bool causal) {
  if (causal || n_tiles < 1 || grid < 1) return 1;
  const int64_t ways = std::min<int64_t>(
      {grid / last_round_tiles(n_tiles, grid), kMaxSplits, n_blocks / kMinSplitBlocks});
  return static_cast<int>(std::max<int64_t>(ways, 1));
}

// The split a persistent launch of at most max_grid CTAs makes, and its grid.
struct TailSplitPlan {
  int splits;          // 1: none
  int64_t first_unit;  // the first unit of the last round
  int64_t units;       // tiles, and the last round's tiles `splits` times
  int64_t grid;
};
inline TailSplitPlan plan_tail_split(const AttentionShape& s, int block_m, int block_n,
                                     int64_t max_grid) {
  const int64_t n_tiles = (s.seq_q + block_m - 1) / block_m * s.batch * s.heads;
  const auto n_blocks = static_cast<int>((s.seq_kv + block_n - 1) / block_n);
  const int splits = tail_splits(n_tiles, max_grid, n_blocks, s.causal);
  const int64_t first_unit = splits > 1 ? n_tiles - last_round_tiles(n_tiles, max_grid) : n_tiles;
  const int64_t units = first_unit + (n_tiles - first_unit) * splits;
  return {splits, first_unit, units, std::min(units, max_grid)};
}

// The workspace of a launch whose grid is at most `grid` CTAs: a part slot per CTA (the split
// units are at most the grid), and an arrival counter per warp of a last-round tile.
struct TailSplitLayout {
  std::size_t partial_bytes;
  std::size_t stats_bytes;
  std::size_t arrival_bytes;
  std::size_t total() const { return partial_bytes + stats_bytes + arrival_bytes; }
};
inline TailSplitLayout tail_split_layout(int64_t grid, int block_m, int head_dim) {
  const auto slots = static_cast<std::size_t>(grid);
  const auto rows = static_cast<std::size_t>(block_m);
  return {slots * rows * static_cast<std::size_t>(head_dim) * sizeof(float),
          slots * rows * 2 * sizeof(float4),  // 128 threads of 16 bytes per 64 rows
          slots * (rows / 16) * sizeof(unsigned)};
}

// Bytes of workspace a persistent launch needs (0 when it splits nothing).
inline std::size_t tail_split_bytes(const AttentionShape& s, int block_m, int block_n,
                                    int64_t max_grid) {
  if (plan_tail_split(s, block_m, block_n, max_grid).splits == 1) return 0;
  return tail_split_layout(max_grid, block_m, static_cast<int>(s.head_dim)).total();
}

inline TailSplit tail_split_in(void* workspace, void* o, const TailSplitPlan& plan, int64_t max_grid,
                               int block_m, int head_dim) {
  if (plan.splits == 1) return {};
  const TailSplitLayout layout = tail_split_layout(max_grid, block_m, head_dim);
  auto* const base = static_cast<unsigned char*>(workspace);
  return {reinterpret_cast<float4*>(base), reinterpret_cast<float4*>(base + layout.partial_bytes),
          reinterpret_cast<unsigned*>(base + layout.partial_bytes + layout.stats_bytes), o,
          static_cast<int>(plan.first_unit), plan.splits};
}

}  // namespace sdpa::flash3
