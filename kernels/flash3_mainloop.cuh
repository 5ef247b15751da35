// A flash3 consumer warpgroup's pass over the key blocks of one unit, in one of two schedules:
// serial (each block's S = Q K^T, softmax and O += P V one after the other) and overlapped
// (block it's S issued together with block it-1's P V, its softmax under that P V; with
// ping-pong, the two consumers also take turns to issue, so that one's softmax runs under the
// other's GEMMs).
#pragma once

#include <cstdint>

#include "flash3_consumer_rows.cuh"
#include "flash3_smem.cuh"
#include "flash3_traits.cuh"

namespace sdpa::flash3 {

// Where the unit's key block `it` (in the order they run: the last block first) sits in the
// K/V ring, which keys it holds, and the hand-back of its stages. The ring runs on across the
// CTA's units: `used` counts the blocks consumed before.
template <typename Traits>
struct KeyBlocks {
  const Flash3Smem<Traits>& smem;
  uint32_t used;
  int q_slot;
  int first_block;
  int n_blocks;

  __device__ __forceinline__ int stage(int it) const {
    return static_cast<int>((used + static_cast<uint32_t>(it)) % Traits::kStages);
  }
  __device__ __forceinline__ uint32_t parity(int it) const {
    return ((used + static_cast<uint32_t>(it)) / Traits::kStages) & 1;
  }
  __device__ __forceinline__ int start(int it) const {
    return (first_block + n_blocks - 1 - it) * Traits::kBlockN;
  }
  __device__ __forceinline__ uint32_t k_tile(int it) const { return smem.k_stage(stage(it)); }
  __device__ __forceinline__ uint32_t v_tile(int it) const { return smem.v_stage(stage(it)); }
  __device__ __forceinline__ void wait_k(int it) const {
    sm90::mbarrier_wait(smem.k_full(stage(it)), parity(it));
  }
  __device__ __forceinline__ void wait_v(int it) const {
    sm90::mbarrier_wait(smem.v_full(stage(it)), parity(it));
  }
  // Every consumer thread hands a K or V stage back once its MMAs on it are complete, and Q
  // after the unit's last Q K^T (the last key block, it == n_blocks - 1).
  __device__ __forceinline__ void release_k(int it) const {
    sm90::mbarrier_arrive(smem.k_empty(stage(it)));
    if (it == n_blocks - 1) sm90::mbarrier_arrive(smem.q_empty(q_slot));
  }
  __device__ __forceinline__ void release_v(int it) const {
    sm90::mbarrier_arrive(smem.v_empty(stage(it)));
  }

  // The first `dead` blocks are waited for, so that the arrivals on their empty barriers count
  // toward the right phase, and handed back without MMAs; the rest run as if the unit had only
  // them.
  __device__ __forceinline__ void skip(int dead) {
    for (int it = 0; it < dead; ++it) {
      wait_k(it);
      sm90::mbarrier_arrive(smem.k_empty(stage(it)));
      wait_v(it);
      sm90::mbarrier_arrive(smem.v_empty(stage(it)));
    }
    used += static_cast<uint32_t>(dead);
    n_blocks -= dead;
  }
};

// Causal tiles taller than a key block skip the leading key blocks none of the warpgroup's rows
// sees (blocks above its rows, and for rows past seq_q all but the last). Not under ping-pong,
// whose two warpgroups take the same number of turns; not where only rows past seq_q would gain:
// without the mask the three-consumer overlapped schedule spills 12 bytes with it, and with
// kBlockM == kBlockN the D128 causal one ran 1.6% slower.
template <typename Traits, bool kCausal>
inline constexpr bool kSkipsDeadBlocks =
    kCausal&& Traits::kSchedule != Flash3Schedule::pingpong&& Traits::kBlockM > Traits::kBlockN;

template <typename Traits, typename T, bool kCausal>
struct Flash3Mainloop {
  using Rows = ConsumerRows<Traits, T, kCausal>;
  static constexpr int kBlockN = Traits::kBlockN;
  static constexpr bool kPingPong = Traits::kSchedule == Flash3Schedule::pingpong;

  // O += softmax(Q K^T) V over the unit's blocks, into acc_o (zero on entry, unnormalised on exit).
  __device__ __forceinline__ static void run(Rows& rows, const KeyBlocks<Traits>& blocks, int cw,
                                             float (&acc_o)[Rows::kOAcc]) {
    float acc_s[Rows::kSAcc];
    uint32_t p_frag[kBlockN / 16][4];
    float alpha[2];
    if constexpr (Traits::kSchedule == Flash3Schedule::serial)
      serial(rows, blocks, acc_o, acc_s, p_frag, alpha);
    else
      overlapped(rows, blocks, cw, acc_o, acc_s, p_frag, alpha);
  }

  __device__ __forceinline__ static void serial(Rows& rows, const KeyBlocks<Traits>& blocks,
                                                float (&acc_o)[Rows::kOAcc],
                                                float (&acc_s)[Rows::kSAcc],
                                                uint32_t (&p_frag)[kBlockN / 16][4],
                                                float (&alpha)[2]) {
    for (int it = 0; it < blocks.n_blocks; ++it) {
      blocks.wait_k(it);
      rows.issue_qk(acc_s, blocks.k_tile(it));
      wgmma_wait<0>();
      fence_registers(acc_s);
      if (rows.softmax(acc_s, blocks.start(it), alpha)) Rows::rescale_o(acc_o, alpha);
      Rows::convert_p(acc_s, p_frag);
      blocks.release_k(it);
      blocks.wait_v(it);
      fence_registers(acc_o);
      rows.issue_pv(acc_o, p_frag, blocks.v_tile(it));
      wgmma_wait<0>();
      fence_registers(acc_o);
      blocks.release_v(it);
    }
  }

  // Turn k of warpgroup 0, then turn k of warpgroup 1, then turn k + 1 of 0, ... (ping-pong).
  __device__ __forceinline__ static void overlapped(Rows& rows, const KeyBlocks<Traits>& blocks,
                                                    int cw, float (&acc_o)[Rows::kOAcc],
                                                    float (&acc_s)[Rows::kSAcc],
                                                    uint32_t (&p_frag)[kBlockN / 16][4],
                                                    float (&alpha)[2]) {
    static_assert(!kPingPong || Traits::kConsumerWGs == 2, "ping-pong takes turns between two");
    constexpr int kTurnBarrier = 1 + Traits::kConsumerWGs;  // after the epilogue's barriers
    const int n_blocks = blocks.n_blocks;
    const int turns = n_blocks + 1;
    const auto begin_turn = [&](int k) {
      if (kPingPong && (cw == 1 || k > 0)) named_barrier_sync(kTurnBarrier + cw, 256);
    };
    const auto end_turn = [&](int k) {
      if (kPingPong && (cw == 0 || k < turns - 1))
        named_barrier_arrive(kTurnBarrier + (1 - cw), 256);
    };
    blocks.wait_k(0);
    begin_turn(0);
    rows.issue_qk(acc_s, blocks.k_tile(0));
    end_turn(0);
    wgmma_wait<0>();
    fence_registers(acc_s);
    blocks.release_k(0);
    rows.softmax(acc_s, blocks.start(0), alpha);  // O is still zero: nothing to rescale
    Rows::convert_p(acc_s, p_frag);
    for (int it = 1; it < n_blocks; ++it) {
      blocks.wait_k(it);
      blocks.wait_v(it - 1);
      begin_turn(it);
      rows.issue_qk(acc_s, blocks.k_tile(it));
      fence_registers(acc_o);
      rows.issue_pv(acc_o, p_frag, blocks.v_tile(it - 1));
      end_turn(it);
      wgmma_wait<1>();  // S of block it has landed; P V of block it-1 may still run
      fence_registers(acc_s);
      blocks.release_k(it);
      const bool rescale = rows.softmax(acc_s, blocks.start(it), alpha);
      wgmma_wait<0>();
      fence_registers(acc_o);
      fence_registers(p_frag);
      blocks.release_v(it - 1);
      if (rescale) Rows::rescale_o(acc_o, alpha);
      Rows::convert_p(acc_s, p_frag);
    }
    const int last = n_blocks - 1;
    blocks.wait_v(last);
    begin_turn(n_blocks);
    fence_registers(acc_o);
    rows.issue_pv(acc_o, p_frag, blocks.v_tile(last));
    end_turn(n_blocks);
    wgmma_wait<0>();
    fence_registers(acc_o);
    blocks.release_v(last);
  }
};

}  // namespace sdpa::flash3
