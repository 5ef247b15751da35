// FlashAttention-2 backward for sm_80 and newer, in FA2's layout. One CTA of 8 warps per block of
// kBlockN keys of one (batch, KV head): K and V stay in shared memory while the CTA steps through
// the group's query heads and their blocks of kBlockM queries, each step's Q, dO, LSE and delta
// loaded by cp.async one step ahead (two stages). A step computes S = Q K^T and dP = dO V^T, then
// P and dS = P * (dP - delta), writes both to shared memory, and from there dV += P^T dO and
// dK += dS^T Q (each warp a slice of keys by a slice of the head dim, in registers over all steps)
// and dQ = dS K, added to an fp32 accumulator (FlashDqTile's order) with atomics.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>

#include "attention_shape.h"
#include "backward_rows.h"
#include "device_math.cuh"
#include "dispatch.cuh"
#include "dq_tile_convert.cuh"
#include "flash_bwd.h"
#include "mma_sm80.cuh"

namespace sdpa::flash {

using namespace sm80;

// A warp's queries of dQ: FA2's 32, on the H100 1.3-2.1% faster than 16 (fewer ldmatrix a
// step); but 16 at D64 in sm_80-class code, where 32 spills at 255 registers.
__host__ __device__ constexpr int flash_bwd_dq_rows(int head_dim) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  return head_dim == 64 ? 16 : 32;
#else
  (void)head_dim;
  return 32;
#endif
}

// kBlockN keys per CTA, kBlockM queries per step, 8 warps. Each GEMM splits its output tile over
// the warps its own way (warps along the first dimension × along the second):
//   S, dP   kBlockM × kBlockN: 2 × 4
//   dK, dV  kBlockN × D:       4 × 2 (FA2's 2D split: a warp holds kBlockN/4 keys × D/2)
//   dQ      kBlockM × D:       a warp kDqRows queries (flash_bwd_dq_rows) by the columns left
// Shared memory: K, V [kBlockN][D]; Q, dO [kBlockM][D] × 2 stages; P, dS [kBlockM][kBlockN];
// LSE, delta [kBlockM] fp32 × 2 stages. 16-bit tiles are rows of 16-byte chunks swizzled
// chunk ^ (row % 8), as the forward's.
template <int kHeadDim_, int kBlockN_, int kBlockM_, bool kPackP_ = false>
struct FlashBwdTraits {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr bool kPackP = kPackP_;  // P held as 16-bit values once made (below)
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kBlockM = kBlockM_;
  static constexpr int kNWarps = 8;
  static constexpr int kNThreads = kNWarps * 32;

  static constexpr int kSdpWarpsM = 2;
  static constexpr int kSdpRows = kBlockM / kSdpWarpsM;              // a warp's queries of S, dP
  static constexpr int kSdpKeys = kBlockN / (kNWarps / kSdpWarpsM);  // ... and keys
  static constexpr int kKvWarpsN = 4;
  static constexpr int kKvKeys = kBlockN / kKvWarpsN;               // a warp's keys of dK, dV
  static constexpr int kKvDims = kHeadDim / (kNWarps / kKvWarpsN);  // ... and head-dim columns
  static constexpr int kDqWarpsM = kBlockM / flash_bwd_dq_rows(kHeadDim);
  static constexpr int kDqRows = kBlockM / kDqWarpsM;               // a warp's queries of dQ
  static constexpr int kDqDims = kHeadDim / (kNWarps / kDqWarpsM);  // ... and columns

  static constexpr int kRowBytes = kHeadDim * 2;
  static constexpr int kScoreRowBytes = kBlockN * 2;  // a row of P or dS
  static constexpr int kChunksPerRow = kHeadDim / 8;
  static constexpr int kRowsPerPass = kNThreads / kChunksPerRow;
  static constexpr int kKvTileBytes = kBlockN * kRowBytes;      // K or V
  static constexpr int kQTileBytes = kBlockM * kRowBytes;       // one stage of Q or dO
  static constexpr int kScoreBytes = kBlockM * kScoreRowBytes;  // P or dS
  static constexpr int kStatsBytes = kBlockM * 4;               // one stage of LSE or delta
  static constexpr int kVOffset = kKvTileBytes;
  static constexpr int kQOffset = 2 * kKvTileBytes;
  static constexpr int kDoOffset = kQOffset + 2 * kQTileBytes;
  static constexpr int kPOffset = kDoOffset + 2 * kQTileBytes;
  static constexpr int kDsOffset = kPOffset + kScoreBytes;
  static constexpr int kLseOffset = kDsOffset + kScoreBytes;
  static constexpr int kDeltaOffset = kLseOffset + 2 * kStatsBytes;
  static constexpr int kSmemBytes = kDeltaOffset + 2 * kStatsBytes;

  static_assert(kHeadDim % 64 == 0, "swizzle needs at least 8 chunks of 16 bytes per row");
  static_assert(kScoreRowBytes % 128 == 0, "P and dS rows are whole 8-chunk swizzles");
  static_assert(kSdpRows % 16 == 0 && kSdpKeys % 16 == 0, "S tiles: whole m16 and x4 B loads");
  static_assert(kKvKeys % 16 == 0 && kKvDims % 16 == 0, "dK, dV tiles: whole m16 and x4 B loads");
  static_assert(kNWarps % kDqWarpsM == 0 && kDqRows % 16 == 0 && kDqDims % 16 == 0,
                "dQ tiles: whole m16 and x4 B loads");
  static_assert(kBlockM % kDqTileRows == 0 && kDqTileRows % kDqRows == 0,
                "a warp's dQ rows lie in one accumulator tile");
  static_assert(kRowsPerPass % 8 == 0, "a thread's swizzle phase must not change between passes");
  static_assert(kBlockN % kRowsPerPass == 0 && kBlockM % kRowsPerPass == 0,
                "whole cp.async passes");
  static_assert(2 * kBlockM <= kNThreads, "one thread per LSE and per delta value");
  static_assert(kSmemBytes <= 163 * 1024, "over sm_80's per-block shared memory");
};

// kBlockN 128 at both head dims: half the dQ atomics and Q/dO re-reads of 64 keys. 128 queries
// a step at D64 (FA2's 128 x 128; 64-query steps were 3.8% slower non-causal, 0.7% causal), P in
// fp32 as FA2 holds it (16-bit P was 1-3% slower: dS unpacked it). 64 at D128 (its earlier
// 32-query steps were 1.13x slower), where P is held as 16-bit values once made so that the step
// fits 255 registers beside dK and dV (fp32 P spills). All on the H100 (docs/kernel-notes.md).
// D64's 162 KB of shared memory leave sm_86-class GPUs out: the backward skips them with the
// reason.
template <int kHeadDim>
struct FlashBwdConfig;
template <>
struct FlashBwdConfig<64> {
  using Traits = FlashBwdTraits<64, 128, 128, false>;
};
template <>
struct FlashBwdConfig<128> {
  using Traits = FlashBwdTraits<128, 128, 64, true>;
};

// dQ's accumulator, [B * Hq, 64-row query blocks] of tiles (dq_tile_convert.cuh) in the order the
// dQ GEMM's warps hold them: warp slot s of a tile (its rows' place among the tile's warps,
// row-warps first) owns pieces s * kWarpPieces + (mt * kDqNTiles + nt) * 32 + lane, lane's
// accumulators [mt][nt][0..3]. A warp's 16-byte atomics then cover 512 bytes side by side: four
// 128-byte lines an instruction, where rows of D floats took eight lines for every 256 bytes and
// so 4x the L1 requests of FA2's atomics (one line for 128 bytes; ncu, D64), with the
// ldmatrix and reduction stalls that came with them (docs/kernel-notes.md).
template <typename Traits>
struct FlashDqTile {
  static constexpr int kRows = kDqTileRows;
  static constexpr int kPieces = kRows * Traits::kHeadDim / 4;
  static constexpr int kRowWarps = kRows / Traits::kDqRows;  // warps along a tile's rows
  static constexpr int kDqNTiles = Traits::kDqDims / 8;
  static constexpr int kWarpPieces = Traits::kDqRows / 16 * kDqNTiles * 32;
  static_assert(kPieces == kWarpPieces * kRowWarps * (Traits::kHeadDim / Traits::kDqDims));

  // The tile of a step (0 or 1 at 128-row steps) and the slot in it of warp `warp`.
  __device__ __forceinline__ static int tile_of(int warp) {
    return (warp % Traits::kDqWarpsM) / kRowWarps;
  }
  __device__ __forceinline__ static int slot_of(int warp) {
    return (warp % Traits::kDqWarpsM) % kRowWarps + kRowWarps * (warp / Traits::kDqWarpsM);
  }
  __device__ __forceinline__ static int row(int piece) {
    const int rest = piece % kWarpPieces;
    return (piece / kWarpPieces) % kRowWarps * Traits::kDqRows + rest / 32 / kDqNTiles * 16 +
           rest % 32 / 4;
  }
  __device__ __forceinline__ static int col(int piece) {
    const int rest = piece % kWarpPieces;
    return (piece / kWarpPieces) / kRowWarps * Traits::kDqDims + rest / 32 % kDqNTiles * 8 +
           2 * (rest % 4);
  }
};

// Arguments of the main kernel.
template <typename T>
struct FlashBwdArgs {
  AttentionShape p;
  const T* q;
  const T* k;
  const T* v;
  const T* d_out;
  const float* lse;    // [B, Hq, Sq], exp2 units (the forward's)
  const float* delta;  // [B, Hq, Sq], rowsum(dO * O)
  float* dq_accum;     // [B * Hq, dq_tile_padded_rows(Sq) / 64] tiles in FlashDqTile's order,
                       // zeroed; gets dS K (unscaled)
  T* dk;               // [B, Hkv, Skv, D]
  T* dv;
};

template <typename Traits, typename T, bool kCausal>
__global__ void __launch_bounds__(Traits::kNThreads, 1) flash_bwd_kernel(const FlashBwdArgs<T> a) {
  constexpr int D = Traits::kHeadDim;
  constexpr int kBlockM = Traits::kBlockM;
  constexpr int kBlockN = Traits::kBlockN;
  constexpr int kRowBytes = Traits::kRowBytes;
  constexpr int kScoreRowBytes = Traits::kScoreRowBytes;
  constexpr int kSdpMTiles = Traits::kSdpRows / 16;
  constexpr int kSdpNTiles = Traits::kSdpKeys / 8;
  constexpr int kKvMTiles = Traits::kKvKeys / 16;
  constexpr int kKvNTiles = Traits::kKvDims / 8;
  constexpr int kDqMTiles = Traits::kDqRows / 16;
  constexpr int kDqNTiles = Traits::kDqDims / 8;

  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t s_base = shared_address(smem);
  const uint32_t s_k = s_base;
  const uint32_t s_v = s_base + Traits::kVOffset;
  const uint32_t s_q = s_base + Traits::kQOffset;  // stage s at + s * kQTileBytes, as dO
  const uint32_t s_do = s_base + Traits::kDoOffset;
  const uint32_t s_p = s_base + Traits::kPOffset;
  const uint32_t s_ds = s_base + Traits::kDsOffset;
  const float* s_lse = reinterpret_cast<const float*>(smem + Traits::kLseOffset);  // [2][kBlockM]
  const float* s_delta = reinterpret_cast<const float*>(smem + Traits::kDeltaOffset);

  const AttentionShape& p = a.p;
  const int seq_q = static_cast<int>(p.seq_q);
  const int seq_kv = static_cast<int>(p.seq_kv);
  const int n0 = static_cast<int>(blockIdx.x) * kBlockN;
  const int kv_head = static_cast<int>(blockIdx.y);
  const int batch = static_cast<int>(blockIdx.z);
  const int group = static_cast<int>(p.heads / p.kv_heads);
  const float scale_log2 = p.scale * 1.4426950408889634f;
  const int64_t kv_offset =
      ((static_cast<int64_t>(batch) * p.kv_heads + kv_head) * p.seq_kv + n0) * D;

  const int tid = static_cast<int>(threadIdx.x);
  // Warp-uniform to the compiler: the warp's tile offsets below live in uniform registers.
  const int warp = __shfl_sync(~0u, tid / 32, 0);
  const int lane = tid % 32;
  const int g = lane / 4;
  const int t = lane % 4;

  // Steps: the group's query heads, each from its first query block that sees a key of the
  // block (top-left causal: query m sees key n <= m, so the block holding query n0) to the last.
  const int m_first = kCausal ? n0 / kBlockM : 0;
  const int steps_per_head = max((seq_q + kBlockM - 1) / kBlockM - m_first, 0);
  const int n_steps = group * steps_per_head;
  auto step_m0 = [&](int step) { return (m_first + step % steps_per_head) * kBlockM; };
  auto step_head = [&](int step) {  // in [B * Hq]
    return static_cast<int64_t>(batch) * p.heads + kv_head * group + step / steps_per_head;
  };
  // The step's first query row in [B, Hq, Sq] and in the accumulator's padded rows.
  auto step_row0 = [&](int step) { return step_head(step) * p.seq_q + step_m0(step); };
  auto step_dq_row0 = [&](int step) {
    return step_head(step) * dq_tile_padded_rows(seq_q) + step_m0(step);
  };

  // cp.async: consecutive threads copy consecutive 16-byte chunks of a row.
  const int ld_row = tid / Traits::kChunksPerRow;
  const int ld_chunk = tid % Traits::kChunksPerRow;
  const uint32_t ld_smem = ld_row * kRowBytes + ((ld_chunk ^ (ld_row & 7)) * 16);
  const int ld_gmem = tid * 8;  // = ld_row * D + ld_chunk * 8
  auto load_tile = [&](uint32_t s_tile, const T* g_tile, int rows, int valid_rows) {
#pragma unroll
    for (int pass = 0; pass < rows / Traits::kRowsPerPass; ++pass) {
      const int r = pass * Traits::kRowsPerPass;
      const bool valid = ld_row + r < valid_rows;
      cp_async_16(s_tile + ld_smem + r * kRowBytes, g_tile + (valid ? ld_gmem + r * D : 0), valid);
    }
  };
  // A step's Q, dO, LSE and delta into `stage`; rows past Sq read as zeros (and are masked).
  auto load_step = [&](int step, int stage) {
    const int m0 = step_m0(step);
    const int64_t row0 = step_row0(step);
    load_tile(s_q + stage * Traits::kQTileBytes, a.q + row0 * D, kBlockM, seq_q - m0);
    load_tile(s_do + stage * Traits::kQTileBytes, a.d_out + row0 * D, kBlockM, seq_q - m0);
    if (tid < 2 * kBlockM) {
      const int r = tid % kBlockM;
      const bool valid = m0 + r < seq_q;
      const float* src = tid < kBlockM ? a.lse : a.delta;
      const int offset = tid < kBlockM ? Traits::kLseOffset : Traits::kDeltaOffset;
      cp_async_4(s_base + offset + (stage * kBlockM + r) * 4, valid ? src + row0 + r : src, valid);
    }
  };

  load_tile(s_k, a.k + kv_offset, kBlockN, seq_kv - n0);
  load_tile(s_v, a.v + kv_offset, kBlockN, seq_kv - n0);
  if (n_steps > 0) load_step(0, 0);
  cp_async_commit();

  // ldmatrix lane addresses, as the forward's. "a" addressing (row lane%8 + 8*((lane/8)%2), chunk
  // half lane/16) reads the four 8x8 matrices (rows 0-7, k 0-7), (8-15, 0-7), (0-7, 8-15),
  // (8-15, 8-15): an A operand stored [m][k], or with .trans a B operand stored [k][n] (two n8
  // tiles). "b" addressing (row lane%8 + 8*(lane/16), half (lane/8)%2) reads (0-7, 0-7),
  // (0-7, 8-15), (8-15, 0-7), (8-15, 8-15): a B operand stored [n][k] (two n8 tiles), or with
  // .trans an A operand stored [k][m] (P and dS are [query][key], the transposes dV and dK need).
  // Each address is a tile's (warp-uniform) base + a lane offset (swizzled_lane_offset) + an
  // immediate. Where the k loop walks the pairs, the lane offsets are four per addressing and row
  // width (pair j % 4); where a warp's own pairs are fixed, one per pair.
  const int a_row = (lane % 8) + 8 * ((lane / 8) % 2);
  const int b_row = (lane % 8) + 8 * (lane / 16);
  const int a_hi = lane / 16;
  const int b_hi = (lane / 8) % 2;

  const int sdp_m0 = (warp % Traits::kSdpWarpsM) * Traits::kSdpRows;
  const int sdp_n0 = (warp / Traits::kSdpWarpsM) * Traits::kSdpKeys;
  const int kv_n0 = (warp % Traits::kKvWarpsN) * Traits::kKvKeys;
  const int kv_d0 = (warp / Traits::kKvWarpsN) * Traits::kKvDims;
  const int dq_m0 = (warp % Traits::kDqWarpsM) * Traits::kDqRows;
  const int dq_d0 = (warp / Traits::kDqWarpsM) * Traits::kDqDims;

  // S = Q K^T, dP = dO V^T: A = Q, dO rows (plain, a); B = K, V rows (plain, b). dQ = dS K: A = dS
  // rows (plain, a).
  uint32_t a_pairs[4], b_pairs[4], a_score_pairs[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    a_pairs[j] = swizzled_lane_offset(a_row, a_hi, kRowBytes, j);
    b_pairs[j] = swizzled_lane_offset(b_row, b_hi, kRowBytes, j);
    a_score_pairs[j] = swizzled_lane_offset(a_row, a_hi, kScoreRowBytes, j);
  }
  // dV += P^T dO, dK += dS^T Q: A = P^T, dS^T (P, dS read .trans, b); B = dO, Q (.trans, a);
  // queries are the k dimension. dQ = dS K: B = K (.trans, a); keys are the k dimension.
  // When a warp's pairs of dO and Q are whole groups of four (D128), a_pairs serve and the warp's
  // part is a uniform 128 bytes per group: four fewer registers.
  constexpr bool kQtPairGroups = (kKvNTiles / 2) % 4 == 0;
  const uint32_t q_t_warp = kQtPairGroups ? (kv_d0 / 64) * 128 : 0;
  uint32_t score_t_pairs[kKvMTiles];
  uint32_t q_t_pairs[kKvNTiles / 2];
  uint32_t k_t_pairs[kDqNTiles / 2];
#pragma unroll
  for (int mt = 0; mt < kKvMTiles; ++mt)
    score_t_pairs[mt] = swizzled_lane_offset(b_row, b_hi, kScoreRowBytes, kv_n0 / 16 + mt);
#pragma unroll
  for (int d16 = 0; d16 < kKvNTiles / 2; ++d16)
    q_t_pairs[d16] = kQtPairGroups ? a_pairs[d16 % 4] + (d16 / 4) * 128
                                   : swizzled_lane_offset(a_row, a_hi, kRowBytes, kv_d0 / 16 + d16);
#pragma unroll
  for (int d16 = 0; d16 < kDqNTiles / 2; ++d16)
    k_t_pairs[d16] = swizzled_lane_offset(a_row, a_hi, kRowBytes, dq_d0 / 16 + d16);

  float acc_dk[kKvMTiles][kKvNTiles][4];
  float acc_dv[kKvMTiles][kKvNTiles][4];
#pragma unroll
  for (int mt = 0; mt < kKvMTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < kKvNTiles; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_dk[mt][nt][e] = acc_dv[mt][nt][e] = 0.f;

  using DqTile = FlashDqTile<Traits>;
  const bool dq_second_tile = DqTile::tile_of(warp) > 0;

  for (int step = 0; step < n_steps; ++step) {
    const int stage = step & 1;
    const int m0 = step_m0(step);
    const uint32_t q_stage = stage * Traits::kQTileBytes;  // a multiple of 128: keeps the swizzle

    cp_async_wait<0>();  // this step's tiles (issued a step ago)
    __syncthreads();     // ... for every thread; every warp is done with the other stage, P, dS
    if (step + 1 < n_steps) load_step(step + 1, stage ^ 1);
    cp_async_commit();

    // S and dP: kSdpRows queries by kSdpKeys keys per warp; S first, then dP, so one operand pair
    // is live at a time. a_tile and b_tile: the warp's first row of Q or dO and of K or V.
    auto sdp_gemm = [&](float(&acc)[kSdpMTiles][kSdpNTiles][4], uint32_t a_tile, uint32_t b_tile) {
#pragma unroll
      for (int mt = 0; mt < kSdpMTiles; ++mt)
#pragma unroll
        for (int nt = 0; nt < kSdpNTiles; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[mt][nt][e] = 0.f;
#pragma unroll
      for (int ks = 0; ks < D / 16; ++ks) {
        const uint32_t k_offset = (ks / 4) * 128;
        uint32_t af[kSdpMTiles][4];
#pragma unroll
        for (int mt = 0; mt < kSdpMTiles; ++mt)
          ldmatrix_x4(af[mt], a_tile + a_pairs[ks % 4] + k_offset + mt * 16 * kRowBytes);
#pragma unroll
        for (int n16 = 0; n16 < kSdpNTiles / 2; ++n16) {
          uint32_t bf[4];
          ldmatrix_x4(bf, b_tile + b_pairs[ks % 4] + k_offset + n16 * 16 * kRowBytes);
#pragma unroll
          for (int mt = 0; mt < kSdpMTiles; ++mt) {
            mma_16816<T>(acc[mt][2 * n16], af[mt], bf[0], bf[1]);
            mma_16816<T>(acc[mt][2 * n16 + 1], af[mt], bf[2], bf[3]);
          }
        }
      }
    };

    // P = exp2(S * scale_log2 - LSE), dS = P * (dP - delta). Element (mt, nt, e) is query
    // m0 + sdp_m0 + mt*16 + g + (e/2)*8 and key n0 + sdp_n0 + nt*8 + 2t + e%2. Keys past Skv,
    // queries past Sq (zero-filled, LSE 0) and causal keys after the query get P = 0.
    const bool masked =
        m0 + kBlockM > seq_q || n0 + kBlockN > seq_kv || (kCausal && n0 + kBlockN - 1 > m0);
    const float* lse = s_lse + stage * kBlockM;
    const float* delta = s_delta + stage * kBlockM;
    auto prob = [&](float s, float row_lse, int row, int nt, int e) {
      float pr = fast_exp2(fmaf(s, scale_log2, -row_lse));
      if (masked) {
        const int query = m0 + row;
        const int key = n0 + sdp_n0 + nt * 8 + 2 * t + e % 2;
        if (query >= seq_q || key >= seq_kv || (kCausal && key > query)) pr = 0.f;
      }
      return pr;
    };
    // P and dS go to shared memory two keys per 32-bit store: a warp's store puts rows g (8 of
    // them, phases 0-7) in 8 different chunks, 4 words each: every bank once.
    auto score_offset = [&](int mt, int half, int nt) {
      const int row = sdp_m0 + mt * 16 + g + half * 8;  // row % 8 == g
      const int chunk = sdp_n0 / 8 + nt;
      return row * kScoreRowBytes + ((chunk ^ g) * 16) + t * 4;
    };

    if constexpr (Traits::kPackP) {
      // P is made, rounded to 16 bits and stored before dP exists: S's fp32 accumulators die
      // there, and dS reads the 16-bit P (the values dV multiplies too), so S and dP are never
      // live together (64 keys x 128 queries at D128 fit 255 registers this way).
      uint32_t p16[kSdpMTiles][kSdpNTiles][2];
      {
        float acc_s[kSdpMTiles][kSdpNTiles][4];
        sdp_gemm(acc_s, s_q + q_stage + sdp_m0 * kRowBytes, s_k + sdp_n0 * kRowBytes);
#pragma unroll
        for (int mt = 0; mt < kSdpMTiles; ++mt)
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const int row = sdp_m0 + mt * 16 + g + half * 8;
            const float row_lse = lse[row];
#pragma unroll
            for (int nt = 0; nt < kSdpNTiles; ++nt) {
              p16[mt][nt][half] =
                  pack2<T>(prob(acc_s[mt][nt][2 * half], row_lse, row, nt, 2 * half),
                           prob(acc_s[mt][nt][2 * half + 1], row_lse, row, nt, 2 * half + 1));
              *reinterpret_cast<uint32_t*>(smem + Traits::kPOffset + score_offset(mt, half, nt)) =
                  p16[mt][nt][half];
            }
          }
      }
      float acc_dp[kSdpMTiles][kSdpNTiles][4];
      sdp_gemm(acc_dp, s_do + q_stage + sdp_m0 * kRowBytes, s_v + sdp_n0 * kRowBytes);
#pragma unroll
      for (int mt = 0; mt < kSdpMTiles; ++mt)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const float row_delta = delta[sdp_m0 + mt * 16 + g + half * 8];
#pragma unroll
          for (int nt = 0; nt < kSdpNTiles; ++nt) {
            const float2 pr = unpack2<T>(p16[mt][nt][half]);
            *reinterpret_cast<uint32_t*>(smem + Traits::kDsOffset + score_offset(mt, half, nt)) =
                pack2<T>(pr.x * (acc_dp[mt][nt][2 * half] - row_delta),
                         pr.y * (acc_dp[mt][nt][2 * half + 1] - row_delta));
          }
        }
    } else {
      float acc_s[kSdpMTiles][kSdpNTiles][4];
      float acc_dp[kSdpMTiles][kSdpNTiles][4];
      sdp_gemm(acc_s, s_q + q_stage + sdp_m0 * kRowBytes, s_k + sdp_n0 * kRowBytes);
      sdp_gemm(acc_dp, s_do + q_stage + sdp_m0 * kRowBytes, s_v + sdp_n0 * kRowBytes);
      // P and dS in place, in fp32.
#pragma unroll
      for (int mt = 0; mt < kSdpMTiles; ++mt)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int row = sdp_m0 + mt * 16 + g + half * 8;
          const float row_lse = lse[row];
          const float row_delta = delta[row];
#pragma unroll
          for (int nt = 0; nt < kSdpNTiles; ++nt)
#pragma unroll
            for (int e = 2 * half; e < 2 * half + 2; ++e) {
              const float pr = prob(acc_s[mt][nt][e], row_lse, row, nt, e);
              acc_s[mt][nt][e] = pr;
              acc_dp[mt][nt][e] = pr * (acc_dp[mt][nt][e] - row_delta);
            }
        }
#pragma unroll
      for (int mt = 0; mt < kSdpMTiles; ++mt)
#pragma unroll
        for (int half = 0; half < 2; ++half)
#pragma unroll
          for (int nt = 0; nt < kSdpNTiles; ++nt) {
            const int offset = score_offset(mt, half, nt);
            *reinterpret_cast<uint32_t*>(smem + Traits::kPOffset + offset) =
                pack2<T>(acc_s[mt][nt][2 * half], acc_s[mt][nt][2 * half + 1]);
            *reinterpret_cast<uint32_t*>(smem + Traits::kDsOffset + offset) =
                pack2<T>(acc_dp[mt][nt][2 * half], acc_dp[mt][nt][2 * half + 1]);
          }
    }
    __syncthreads();  // P and dS complete

    // dV += P^T dO and dK += dS^T Q: kKvKeys keys by kKvDims columns per warp.
#pragma unroll
    for (int kk = 0; kk < kBlockM / 16; ++kk) {
      uint32_t pa[kKvMTiles][4];
      uint32_t dsa[kKvMTiles][4];
#pragma unroll
      for (int mt = 0; mt < kKvMTiles; ++mt) {
        const uint32_t offset = score_t_pairs[mt] + kk * 16 * kScoreRowBytes;
        ldmatrix_x4_trans(pa[mt], s_p + offset);
        ldmatrix_x4_trans(dsa[mt], s_ds + offset);
      }
#pragma unroll
      for (int d16 = 0; d16 < kKvNTiles / 2; ++d16) {
        const uint32_t offset = q_t_pairs[d16] + kk * 16 * kRowBytes;
        uint32_t dob[4];
        uint32_t qb[4];
        ldmatrix_x4_trans(dob, (s_do + q_stage + q_t_warp) + offset);
        ldmatrix_x4_trans(qb, (s_q + q_stage + q_t_warp) + offset);
#pragma unroll
        for (int mt = 0; mt < kKvMTiles; ++mt) {
          mma_16816<T>(acc_dv[mt][2 * d16], pa[mt], dob[0], dob[1]);
          mma_16816<T>(acc_dv[mt][2 * d16 + 1], pa[mt], dob[2], dob[3]);
          mma_16816<T>(acc_dk[mt][2 * d16], dsa[mt], qb[0], qb[1]);
          mma_16816<T>(acc_dk[mt][2 * d16 + 1], dsa[mt], qb[2], qb[3]);
        }
      }
    }

    // dQ += dS K: kDqRows queries by kDqDims columns per warp, into the accumulator.
    float acc_dq[kDqMTiles][kDqNTiles][4];
#pragma unroll
    for (int mt = 0; mt < kDqMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kDqNTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc_dq[mt][nt][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      uint32_t dsf[kDqMTiles][4];
#pragma unroll
      for (int mt = 0; mt < kDqMTiles; ++mt)
        ldmatrix_x4(dsf[mt], s_ds + dq_m0 * kScoreRowBytes + a_score_pairs[kk % 4] +
                                 (kk / 4) * 128 + mt * 16 * kScoreRowBytes);
#pragma unroll
      for (int d16 = 0; d16 < kDqNTiles / 2; ++d16) {
        uint32_t kb[4];
        ldmatrix_x4_trans(kb, s_k + k_t_pairs[d16] + kk * 16 * kRowBytes);
#pragma unroll
        for (int mt = 0; mt < kDqMTiles; ++mt) {
          mma_16816<T>(acc_dq[mt][2 * d16], dsf[mt], kb[0], kb[1]);
          mma_16816<T>(acc_dq[mt][2 * d16 + 1], dsf[mt], kb[2], kb[3]);
        }
      }
    }
    // Into the step's tiles (rows past Sq add zeros: their P is 0), unless the warp's tile is
    // past Sq and not allocated (a 128-row step's second tile, at the end of a head).
    if (dq_second_tile && m0 + kDqTileRows >= seq_q) continue;
    // The thread's first piece of the step's dQ tiles (16-byte aligned: the accumulator is,
    // backward_rows.h).
    float* const dq_piece =
        a.dq_accum + step_dq_row0(step) * D +
        (DqTile::tile_of(warp) * DqTile::kPieces + DqTile::slot_of(warp) * DqTile::kWarpPieces +
         static_cast<int>(threadIdx.x % 32)) * 4;
#pragma unroll
    for (int mt = 0; mt < kDqMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kDqNTiles; ++nt) {
        float* const piece = dq_piece + (mt * kDqNTiles + nt) * 32 * 4;
        const float(&v)[4] = acc_dq[mt][nt];
#if __CUDA_ARCH__ >= 900
        atomicAdd(reinterpret_cast<float4*>(piece), make_float4(v[0], v[1], v[2], v[3]));
#else
#pragma unroll
        for (int e = 0; e < 4; ++e) atomicAdd(piece + e, v[e]);
#endif
      }
  }

  cp_async_wait<0>();  // K and V, when no query block saw this key block

  // dK = scale * dS^T Q (dS was left unscaled), dV as summed; rows past Skv are not written.
#pragma unroll
  for (int mt = 0; mt < kKvMTiles; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int key = kv_n0 + mt * 16 + g + half * 8;
      if (n0 + key >= seq_kv) continue;
      T* dk_row = a.dk + kv_offset + static_cast<int64_t>(key) * D + kv_d0 + 2 * t;
      T* dv_row = a.dv + kv_offset + static_cast<int64_t>(key) * D + kv_d0 + 2 * t;
#pragma unroll
      for (int nt = 0; nt < kKvNTiles; ++nt) {
        *reinterpret_cast<uint32_t*>(dk_row + nt * 8) =
            pack2<T>(acc_dk[mt][nt][2 * half] * p.scale, acc_dk[mt][nt][2 * half + 1] * p.scale);
        *reinterpret_cast<uint32_t*>(dv_row + nt * 8) =
            pack2<T>(acc_dv[mt][nt][2 * half], acc_dv[mt][nt][2 * half + 1]);
      }
    }
}

// The main kernel of configuration Traits on `b`'s dtype and causal flag: one CTA per key block
// of each (batch, KV head).
template <typename Traits>
cudaError_t launch_flash_backward_traits(const FusedBackward& b, const BackwardRows& rows) {
  return dispatch_dtype(b.dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    auto* const causal = flash_bwd_kernel<Traits, T, true>;
    auto* const full = flash_bwd_kernel<Traits, T, false>;
    static const cudaError_t attr = [&] {
      const cudaError_t c = cudaFuncSetAttribute(
          causal, cudaFuncAttributeMaxDynamicSharedMemorySize, Traits::kSmemBytes);
      const cudaError_t n = cudaFuncSetAttribute(full, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 Traits::kSmemBytes);
      return c != cudaSuccess ? c : n;
    }();
    if (attr != cudaSuccess) return attr;
    const FlashBwdArgs<T> args{b.shape,
                               static_cast<const T*>(b.q),
                               static_cast<const T*>(b.k),
                               static_cast<const T*>(b.v),
                               static_cast<const T*>(b.d_out),
                               b.lse,
                               rows.delta,
                               rows.dq_accum,
                               static_cast<T*>(b.dk),
                               static_cast<T*>(b.dv)};
    const dim3 grid(static_cast<unsigned>((b.shape.seq_kv + Traits::kBlockN - 1) / Traits::kBlockN),
                    static_cast<unsigned>(b.shape.kv_heads), static_cast<unsigned>(b.shape.batch));
    (b.shape.causal ? causal
                    : full)<<<grid, Traits::kNThreads, Traits::kSmemBytes, b.stream>>>(args);
    return cudaGetLastError();
  });
}

template <int kHeadDim>
cudaError_t launch_flash_backward_main(const FusedBackward& b, const BackwardRows& rows) {
  return launch_flash_backward_traits<typename FlashBwdConfig<kHeadDim>::Traits>(b, rows);
}

// dQ = scale * the accumulator's tiles (FlashDqTile) in the dtype, a thread a 16-byte piece. Not
// named flash*: the profile would count it as the fused kernel (categorize_kernel).
template <typename T, int kHeadDim>
__global__ void backward_convert_dq_warp_tiles_kernel(const float* dq_accum, T* dq,
                                                      int64_t pieces, int m_blocks, int seq_q,
                                                      float scale) {
  using Tile = FlashDqTile<typename FlashBwdConfig<kHeadDim>::Traits>;
  for (int64_t i = device::global_thread_index(); i < pieces; i += device::grid_stride())
    convert_dq_tile_piece<T, Tile, kHeadDim>(dq_accum, dq, i, m_blocks, seq_q, scale);
}

template <int kHeadDim>
cudaError_t launch_flash_convert_dq(const FusedBackward& b, const BackwardRows& rows) {
  const AttentionShape& s = b.shape;
  const int64_t m_blocks = rows.dq_rows / kDqTileRows;
  const int64_t pieces = s.batch * s.heads * m_blocks * (kDqTileRows * kHeadDim / 4);
  return dispatch_dtype(b.dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    backward_convert_dq_warp_tiles_kernel<T, kHeadDim>
        <<<elementwise_grid(pieces), kElementwiseBlock, 0, b.stream>>>(
            rows.dq_accum, static_cast<T*>(b.dq), pieces, static_cast<int>(m_blocks),
            static_cast<int>(s.seq_q), s.scale);
    return cudaGetLastError();
  });
}

template <int kHeadDim>
int backward_main_smem_bytes() {
  return FlashBwdConfig<kHeadDim>::Traits::kSmemBytes;
}

}  // namespace sdpa::flash
