// The tile queue of a persistent flash3 grid, in memory the caller owns: the first words of the
// launch's workspace, which the backend allocates and zeroes once (prepare). Launches with their
// own workspaces may run at the same time; launches that share one must not.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sdpa::flash3 {

// The most CTAs of a persistent grid (the queue keeps a word per CTA and Q slot).
inline constexpr int kMaxPersistentCtas = 1024;
inline constexpr int kNextTileSlots = 2;  // one word per Q slot

// Tiles blockIdx.x < gridDim.x come first, then each CTA's producer takes the next one by
// counting `taken` up; the last CTA to finish (counted by `done`) sets both back to zero, so the
// next launch on the same workspace starts from tile gridDim.x again. next_tile[slot][cta] is
// where a CTA's producer leaves the index of the unit whose Q it loads next: written before Q's
// barrier arrives and read by the consumers once it has, in global memory, since a shared-memory
// word handed over on an mbarrier is reported by compute-sanitizer's racecheck, which does not
// follow mbarriers.
struct TileQueue {
  unsigned* taken = nullptr;
  unsigned* done = nullptr;
  uint32_t (*next_tile)[kMaxPersistentCtas] = nullptr;
};

// Bytes of the queue, rounded up to 16 so that what follows it in the workspace stays aligned.
inline constexpr std::size_t kTileQueueBytes =
    (2 + kNextTileSlots * kMaxPersistentCtas) * sizeof(uint32_t) + 8;
static_assert(kTileQueueBytes % 16 == 0);

inline TileQueue tile_queue_in(void* workspace) {
  auto* const words = static_cast<uint32_t*>(workspace);
  return {words, words + 1, reinterpret_cast<uint32_t(*)[kMaxPersistentCtas]>(words + 2)};
}

}  // namespace sdpa::flash3
