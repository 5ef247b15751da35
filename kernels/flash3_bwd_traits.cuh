// Compile-time tile choices of the flash3 backward (FlashAttention-3 design, sm_90a), where a CTA
// keeps its tiles in shared memory, and which query steps a CTA runs.
#pragma once

#include <cstdint>

#include "attention_shape.h"
#include "mma_sm90.cuh"

namespace sdpa::flash3 {

// A CTA owns kBlockN = 128 keys of one (batch, KV head): each of its two consumer warpgroups
// owns 64 of them (one wgmma m64 tile of dK and dV, kept in registers over the whole loop), and
// the CTA steps through the queries of every query head of the group in blocks of kBlockM = 64
// rows, streamed through a ring of kStages stages (Q, dO, LSE and delta). Tiles of 16-bit values
// are D/64 column blocks of 128-byte rows, 128-byte swizzled: what TMA writes and wgmma reads.
// A warpgroup's registers at D128: dK and dV 64 + 64, S^T and dP^T 32 + 32 (or P^T and dS^T
// packed, 16 + 16), a 64-column chunk of dQ 32: under the 240 it gets. dS^T goes through
// shared memory: the two warpgroups' tiles together are dS over the CTA's 128 keys.
//
// dQ's partial of a step goes into the fp32 accumulator as FA3 adds it (v4; v2's per-thread
// float2 atomics were 1.04-1.19x slower, docs/kernel-notes.md): the writing warpgroups store it
// to a staging tile in shared memory and a warp of the producer warpgroup adds the tile with one
// bulk reduce-add (cp.reduce.async.bulk ... .add.f32) into the accumulator's tile of the same
// layout (Flash3DqTile). How many tiles: Flash3BwdConfig.
template <int kHeadDim_, int kStages_>
struct Flash3BwdTraits {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kStages = kStages_;
  static constexpr int kConsumerWGs = 2;
  static constexpr int kWGKeys = 64;
  static constexpr int kBlockN = kConsumerWGs * kWGKeys;
  static constexpr int kBlockM = 64;
  static constexpr int kNThreads = (kConsumerWGs + 1) * 128;
  static constexpr int kColBlocks = kHeadDim / 64;
  static constexpr int kProducerRegs = 24;
  static constexpr int kConsumerRegs = 240;

  static constexpr int kKVColBytes = kBlockN * 128;                // a 64-column block of K or V
  static constexpr int kKVBytes = kColBlocks * kKVColBytes;        // K or V
  static constexpr int kQColBytes = kBlockM * 128;                 // a 64-column block of Q or dO
  static constexpr int kQBytes = kColBlocks * kQColBytes;          // Q or dO of a step
  static constexpr int kStatBytes = kBlockM * 4;                   // LSE or delta of a step
  static constexpr int kStepBytes = 2 * kQBytes + 2 * kStatBytes;  // what a stage's TMA lands
  static constexpr int kDsBytes = kWGKeys * kBlockM * 2;           // a warpgroup's dS^T, 64 x 64
  // dQ = dS K over the CTA's 128 keys, in 64-column chunks: at D128 each warpgroup takes one chunk
  // every step, at D64 the warpgroups take the one chunk of alternate steps.
  static constexpr int kDqChunks = kHeadDim / 64;
  // The staging tiles: two (a step's tile is written while the reducing warp still reads the one
  // before), of 64 rows x D fp32; the threads that write a tile (both warpgroups at D128, the
  // step's one at D64) and the reducing warp meet on named barriers.
  static constexpr int kDqBuffers = 2;
  static constexpr int kDqTileBytes = kBlockM * kHeadDim * 4;
  static constexpr int kDqWriters = (kDqChunks == kConsumerWGs ? kConsumerWGs : 1) * 128;
  static constexpr int kDqBarrierThreads = kDqWriters + 32;
  // dK and dV of a warpgroup's keys as 16-bit values, staged for their TMA stores in the stages of
  // Q and dO (free by then): a column block of 64 rows of 128 bytes.
  static constexpr int kKeyGradColBytes = kWGKeys * 128;
  static constexpr int kKeyGradBytes = kColBlocks * kKeyGradColBytes;
  // K/V's barrier, then full and empty for each stage.
  static constexpr int kBarrierBytes = 8 * (1 + 2 * kStages);
  // 1024 bytes of slack: the swizzle atoms must start 1024-aligned. dS^T (both warpgroups'
  // tiles) has two buffers, by step parity (flash3_bwd_kernel.cuh).
  static constexpr int kSmemBytes = 1024 + 2 * kKVBytes + kStages * (2 * kQBytes + 2 * kStatBytes) +
                                    2 * kConsumerWGs * kDsBytes + kDqBuffers * kDqTileBytes +
                                    kBarrierBytes;

  static_assert(kHeadDim == 64 || kHeadDim == 128, "wgmma_rs is written for N = 64 and 128");
  static_assert(kBlockM == 64, "S^T and dP^T are one m64n64 wgmma per k16 step");
  static_assert(kWGKeys == 64, "a warpgroup's keys are one m64 tile of dK and dV");
  static_assert(kDqChunks == kConsumerWGs || kDqChunks == 1, "dQ's chunks shared out evenly");
  static_assert(kProducerRegs * 128 + kConsumerRegs * 128 * kConsumerWGs <= 65536,
                "the register file holds one CTA");
  static_assert(kSmemBytes <= 227 * 1024, "over the per-block shared-memory limit");
  static_assert(2 * kConsumerWGs * kKeyGradBytes <= 2 * kStages * kQBytes,
                "dK and dV are staged in the stages of Q and dO");
};

// D64: three stages of Q, dO and the rows and two dQ staging tiles (16 KB each); the CTA is alone
// on its SM (registers), so shared memory is free up to the limit. D128: two stages and two tiles
// (32 KB each), FA3's hdim128 choice; three stages and one tile, all that fits beside them, were
// 1.3% slower non-causal and the same causal on the H100 (docs/kernel-notes.md, v4).
template <int kHeadDim>
struct Flash3BwdConfig {
  using Traits = Flash3BwdTraits<kHeadDim, kHeadDim == 64 ? 3 : 2>;
};

// K and V (each 1024-aligned), the stages' Q and dO, two buffers of the warpgroups' dS^T tiles
// (keys 0-63, then 64-127: 128 rows of 64 queries), the dQ staging tiles, the
// stages' LSE and delta rows, then the barriers. Full barriers count the bytes TMA landed; empty
// ones count the consumer threads done with a stage.
template <typename Traits>
struct Flash3BwdSmem {
  static constexpr int kStages = Traits::kStages;

  uint32_t k;
  uint32_t v;
  uint32_t q;
  uint32_t d_o;
  uint32_t ds;
  uint32_t dq;
  uint32_t stats;
  uint32_t bars;

  __device__ __forceinline__ explicit Flash3BwdSmem(uint32_t base)
      : k((base + 1023) & ~1023u),
        v(k + Traits::kKVBytes),
        q(v + Traits::kKVBytes),
        d_o(q + kStages * Traits::kQBytes),
        ds(d_o + kStages * Traits::kQBytes),
        dq(ds + 2 * Traits::kConsumerWGs * Traits::kDsBytes),
        stats(dq + Traits::kDqBuffers * Traits::kDqTileBytes),
        bars(stats + kStages * 2 * Traits::kStatBytes) {}

  __device__ __forceinline__ uint32_t q_stage(int s) const { return q + s * Traits::kQBytes; }
  __device__ __forceinline__ uint32_t do_stage(int s) const { return d_o + s * Traits::kQBytes; }
  __device__ __forceinline__ uint32_t ds_buffer(int buffer) const {
    return ds + buffer * Traits::kConsumerWGs * Traits::kDsBytes;
  }
  __device__ __forceinline__ uint32_t dq_tile(int buffer) const {
    return dq + buffer * Traits::kDqTileBytes;
  }
  // Consumer warpgroup cw's staged dK (which 0) or dV (1), over the stages of Q and dO.
  __device__ __forceinline__ uint32_t key_grads(int which, int cw) const {
    return q + (which * Traits::kConsumerWGs + cw) * Traits::kKeyGradBytes;
  }
  __device__ __forceinline__ uint32_t lse(int s) const {
    return stats + s * 2 * Traits::kStatBytes;
  }
  __device__ __forceinline__ uint32_t delta(int s) const { return lse(s) + Traits::kStatBytes; }

  __device__ __forceinline__ uint32_t kv_full() const { return bars; }
  __device__ __forceinline__ uint32_t full(int s) const { return bars + 8 * (1 + s); }
  __device__ __forceinline__ uint32_t empty(int s) const { return bars + 8 * (1 + kStages + s); }

  // Step i of a CTA uses stage i % kStages, whose barriers are in their (i / kStages)-th phase.
  __device__ __forceinline__ static int stage(int i) { return i % kStages; }
  __device__ __forceinline__ static uint32_t parity(int i) {
    return static_cast<uint32_t>((i / kStages) & 1);
  }

  // By one thread, before the CTA's first __syncthreads.
  __device__ __forceinline__ void init_barriers() const {
    sm90::mbarrier_init(kv_full(), 1);
    for (int s = 0; s < kStages; ++s) {
      sm90::mbarrier_init(full(s), 1);
      sm90::mbarrier_init(empty(s), Traits::kConsumerWGs * 128);
    }
    sm90::mbarrier_init_fence();
  }
};

// A tile of dQ (64 query rows x kHeadDim fp32) in the order its writers hold it, in the staging
// tiles and in the accumulator alike, so that each thread stores 16 bytes at a time with no bank
// conflict and a tile is added by one bulk reduce-add: 64-column chunk c, accumulator quad j
// (columns 8j..8j+7 of the chunk) and thread tw of the writing warpgroup make piece
// (c * 8 + j) * 128 + tw of 16 bytes, the thread's accumulators 4j..4j+3 (wgmma's m64n64
// layout): rows 16 (tw / 32) + (tw % 32) / 4 and 8 below, columns 64c + 8j + 2 (tw % 4) and + 1.
// The accumulator is [B * Hq, query blocks] of these tiles (rows past seq_q included, padded).
template <int kHeadDim>
struct Flash3DqTile {
  static constexpr int kRows = 64;  // a step's query block (Flash3BwdTraits::kBlockM)
  static constexpr int kFloats = kRows * kHeadDim;
  static constexpr int kPieces = kFloats / 4;
  __device__ __forceinline__ static uint32_t piece_bytes(int chunk, int j, int tw) {
    return static_cast<uint32_t>(((chunk * 8 + j) * 128 + tw) * 16);
  }
  // A piece's first row and column in the tile: its values are (row, col), (row, col + 1),
  // (row + 8, col), (row + 8, col + 1).
  __device__ __forceinline__ static int row(int piece) {
    const int tw = piece % 128;
    return 16 * (tw / 32) + (tw % 32) / 4;
  }
  __device__ __forceinline__ static int col(int piece) {
    return 64 * (piece / 1024) + 8 * (piece / 128 % 8) + 2 * (piece % 4);
  }
};

// (batch, KV head) units taken together when causal (below).
inline constexpr int kBwdOrderUnits = 8;

// Which key block of which (batch, KV head) a CTA takes; the grid is (key blocks, KV heads,
// batch). Non-causal: blockIdx as it is, the key blocks of a unit launched side by side (they
// share its Q and dO in L2). Causal: key block j sees the queries from j's on, so its work falls
// with j; in blockIdx order the heavy first blocks of the last units start in the last wave and
// run on after the other CTAs are done (3.4% over the ideal for B8 H16 S4096, simulating 4096
// CTAs on 132 SMs). So the units go in groups of kBwdOrderUnits and, within a group, key block by
// key block across the group's units: every group's heavy blocks start first (0.1% over). On the
// H100 the D128 causal backward is 2-3% faster this way, D64's the same (docs/kernel-notes.md).
struct BwdBlockIndex {
  int n_block;
  int kv_head;
  int batch;
};
template <bool kCausal>
__device__ __forceinline__ BwdBlockIndex bwd_block_index() {
  if constexpr (!kCausal) {
    return {static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y),
            static_cast<int>(blockIdx.z)};
  } else {
    const int n_blocks = static_cast<int>(gridDim.x);
    const int units = static_cast<int>(gridDim.y * gridDim.z);
    const int linear =
        static_cast<int>(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
    const int per_group = kBwdOrderUnits * n_blocks;
    const int group = linear / per_group;
    const int rank = linear % per_group;
    const int size = min(kBwdOrderUnits, units - group * kBwdOrderUnits);
    const int unit = group * kBwdOrderUnits + rank % size;
    return {rank / size, unit % static_cast<int>(gridDim.y), unit / static_cast<int>(gridDim.y)};
  }
}

// The work of a CTA: its block of keys of one KV head of one batch (bwd_block_index), and the
// steps over its group's query heads and their blocks of kBlockM rows, head by head. Causal
// (top-left: query m sees key n <= m): a head's steps start at the query block holding the
// block's first key; a block of keys no query sees has none, and writes dK = dV = 0.
template <typename Traits, bool kCausal>
struct Flash3BwdBlock {
  int n0;
  int bh_kv;
  int bh_q0;     // the group's first query head
  int m_first;   // a head's first query block
  int m_blocks;  // query blocks a head
  int steps;

  __device__ __forceinline__ explicit Flash3BwdBlock(const AttentionShape& p) {
    const int group = static_cast<int>(p.heads / p.kv_heads);
    m_blocks = static_cast<int>((p.seq_q + Traits::kBlockM - 1) / Traits::kBlockM);
    const BwdBlockIndex b = bwd_block_index<kCausal>();
    n0 = b.n_block * Traits::kBlockN;
    bh_kv = static_cast<int>(b.batch * p.kv_heads + b.kv_head);
    bh_q0 = static_cast<int>(b.batch * p.heads + b.kv_head * group);
    m_first = kCausal ? min(n0 / Traits::kBlockM, m_blocks) : 0;
    steps = group * (m_blocks - m_first);
  }

  // A step's query head and first query row, advanced step by step: computing them from the
  // step's index put an integer division on every step's path to its GEMMs.
  struct QueryStep {
    int bh_q;
    int m_block;
    __device__ __forceinline__ int m0() const { return m_block * Traits::kBlockM; }
  };
  __device__ __forceinline__ QueryStep first_step() const { return {bh_q0, m_first}; }
  __device__ __forceinline__ void advance(QueryStep& step) const {
    if (++step.m_block == m_blocks) {
      step.m_block = m_first;
      ++step.bh_q;
    }
  }
  // A step's tile of the dQ accumulator (Flash3DqTile), in floats from its start.
  __device__ __forceinline__ int64_t dq_tile(const QueryStep& step) const {
    return (static_cast<int64_t>(step.bh_q) * m_blocks + step.m_block) *
           Flash3DqTile<Traits::kHeadDim>::kFloats;
  }
};

}  // namespace sdpa::flash3
