// The flash3 producer: one thread of warpgroup 0 takes the CTA's units from the tile scheduler
// and issues their TMA loads: Q into its slot, then each key block's K and V into the next stage
// of the ring. Key blocks run from the last to the first, so that the masked ones (the causal
// diagonal, the end of the keys) come first; the consumers take them in the same order.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "flash3_smem.cuh"
#include "flash3_tile_scheduler.cuh"
#include "mma_sm90.cuh"

namespace sdpa::flash3 {

template <typename Traits, bool kCausal>
__device__ __forceinline__ void run_producer(const Flash3Smem<Traits>& smem,
                                             const Flash3TileScheduler<Traits, kCausal>& scheduler,
                                             const CUtensorMap* map_q, const CUtensorMap* map_k,
                                             const CUtensorMap* map_v) {
  using namespace sm90;
  using Smem = Flash3Smem<Traits>;
  constexpr int kColBlocks = Traits::kColBlocks;
  constexpr int kQColBytes = Traits::kBlockM * 128;
  constexpr int kKVColBytes = Traits::kBlockN * 128;
  // The ring runs on across tiles: `load` counts the key blocks loaded by this CTA.
  int load = 0;
  int tile_count = 0;
  // Q of a tile first: its slot was handed back after the tile before the last one, so the
  // load starts as soon as the producer takes the tile, a few key blocks before the consumers
  // finish the current one.
  const auto load_q = [&](int64_t i, const auto& tile) {
    const int slot = Smem::q_slot(tile_count);
    mbarrier_wait_idle(smem.q_empty(slot), Smem::q_parity(tile_count) ^ 1);
    scheduler.publish(slot, static_cast<uint32_t>(i));
    mbarrier_arrive_expect_tx(smem.q_full(slot), Traits::kQBytes);
#pragma unroll
    for (int c = 0; c < kColBlocks; ++c)
      tma_load_3d(smem.q_tile(slot) + c * kQColBytes, map_q, smem.q_full(slot), c * 64, tile.m0,
                  tile.bh_q);
  };
  for (int64_t i = scheduler.first(); i < scheduler.n_units; ++tile_count) {
    const auto tile = scheduler.unit_at(i);
    load_q(i, tile);
    for (int it = 0; it < tile.n_blocks; ++it, ++load) {
      const int s = load % Traits::kStages;
      const uint32_t free_parity = ((load / Traits::kStages) & 1) ^ 1;
      const int n0 = (tile.first_block + tile.n_blocks - 1 - it) * Traits::kBlockN;
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
      load_stage(map_k, smem.k, smem.k_empty(s), smem.k_full(s));
      load_stage(map_v, smem.v, smem.v_empty(s), smem.v_full(s));
    }
    i = scheduler.next();
  }
  // The consumers wait for one more Q: there is none.
  const int slot = Smem::q_slot(tile_count);
  mbarrier_wait_idle(smem.q_empty(slot), Smem::q_parity(tile_count) ^ 1);
  scheduler.publish(slot, Flash3TileScheduler<Traits, kCausal>::kNoTile);
  mbarrier_arrive(smem.q_full(slot));
  scheduler.finish();
}

}  // namespace sdpa::flash3
