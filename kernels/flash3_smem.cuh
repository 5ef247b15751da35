// Where a flash3 CTA keeps its tiles and barriers in shared memory: Q's slots, O's staging tile,
// the K and V rings, then the barriers (full and empty for each Q slot, then for each stage of
// K and V). Full barriers count the bytes TMA landed; empty ones count the consumer threads done
// with a stage, or with a Q slot.
#pragma once

#include <cstdint>

#include "mma_sm90.cuh"

namespace sdpa::flash3 {

template <typename Traits>
struct Flash3Smem {
  static constexpr int kQSlots = Traits::kQSlots;
  static constexpr int kStages = Traits::kStages;
  static constexpr int kRingBars = 2 * kQSlots;  // the ring's barriers follow Q's

  uint32_t q;
  uint32_t o;
  uint32_t k;
  uint32_t v;
  uint32_t bars;

  // `base`: the shared address of the dynamic shared memory; the swizzle atoms start 1024-aligned.
  __device__ __forceinline__ explicit Flash3Smem(uint32_t base)
      : q((base + 1023) & ~1023u),
        o(q + kQSlots * Traits::kQBytes),
        k(o + Traits::kQBytes),
        v(k + kStages * Traits::kTileBytes),
        bars(v + kStages * Traits::kTileBytes) {}

  __device__ __forceinline__ uint32_t q_tile(int slot) const { return q + slot * Traits::kQBytes; }
  __device__ __forceinline__ uint32_t k_stage(int s) const { return k + s * Traits::kTileBytes; }
  __device__ __forceinline__ uint32_t v_stage(int s) const { return v + s * Traits::kTileBytes; }

  __device__ __forceinline__ uint32_t q_full(int slot) const { return bars + 8 * slot; }
  __device__ __forceinline__ uint32_t q_empty(int slot) const {
    return bars + 8 * (kQSlots + slot);
  }
  __device__ __forceinline__ uint32_t k_full(int s) const { return bars + 8 * (kRingBars + s); }
  __device__ __forceinline__ uint32_t v_full(int s) const {
    return bars + 8 * (kRingBars + kStages + s);
  }
  __device__ __forceinline__ uint32_t k_empty(int s) const {
    return bars + 8 * (kRingBars + 2 * kStages + s);
  }
  __device__ __forceinline__ uint32_t v_empty(int s) const {
    return bars + 8 * (kRingBars + 3 * kStages + s);
  }

  // Tile t of a CTA uses Q slot t % kQSlots, whose barriers are in their (t / kQSlots)-th phase.
  __device__ __forceinline__ static int q_slot(int t) { return t % kQSlots; }
  __device__ __forceinline__ static uint32_t q_parity(int t) {
    return static_cast<uint32_t>((t / kQSlots) & 1);
  }

  // By one thread, before the CTA's first __syncthreads.
  __device__ __forceinline__ void init_barriers() const {
    constexpr int kConsumers = Traits::kConsumerWGs * 128;  // one arrival each on an empty
    for (int slot = 0; slot < kQSlots; ++slot) {
      sm90::mbarrier_init(q_full(slot), 1);
      sm90::mbarrier_init(q_empty(slot), kConsumers);
    }
    for (int s = 0; s < kStages; ++s) {
      sm90::mbarrier_init(k_full(s), 1);
      sm90::mbarrier_init(v_full(s), 1);
      sm90::mbarrier_init(k_empty(s), kConsumers);
      sm90::mbarrier_init(v_empty(s), kConsumers);
    }
    sm90::mbarrier_init_fence();
  }
};

}  // namespace sdpa::flash3
