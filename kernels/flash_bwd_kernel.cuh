// FlashAttention-2 backward for sm_80 and newer (work in progress: not yet run on a GPU). One CTA
// per block of kBlockN keys of one (batch, KV head): K and V stay in shared memory while the CTA
// loops over the group's query heads and their blocks of kBlockM queries. Each warp owns 16 key
// rows and computes, in registers, S^T = K Q^T and dP^T = V dO^T, then P^T and dS^T, and from them
// dV += P^T dO and dK += dS^T Q (P^T and dS^T packed into A operands as the forward packs P).
// dS goes to shared memory transposed, and each warp then computes 16 query rows of dS K, added
// into an fp32 dQ accumulator with atomics. dK, dV sum over the group in registers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>

#include "attention_shape.h"
#include "dispatch.cuh"
#include "flash_bwd.h"
#include "mma_sm80.cuh"

namespace sdpa::flash {

using namespace sm80;

// kBlockM queries per step: 32 at D64, 16 at D128. Each warp keeps dK and dV of its 16 keys over
// the whole head dim in registers (64 floats a thread at D64, 128 at D128), so the step's S^T and
// dP^T tiles must stay small; 64 and 32 rows spilled.
template <int kHeadDim_>
struct FlashBwdTraits {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockN = 64;  // keys per CTA: 4 warps of 16
  static constexpr int kBlockM = kHeadDim_ <= 64 ? 32 : 16;
  static constexpr int kNWarps = 4;
  // dQ = dS K: the warps split the step's kBlockM rows in m16 tiles, then the head dim in parts.
  static constexpr int kDqRowTiles = kBlockM / 16;
  static constexpr int kDqColParts = kNWarps / kDqRowTiles;
  static constexpr int kDqColTiles = kHeadDim / 8 / kDqColParts;  // n8 tiles of dQ per warp
  static constexpr int kNThreads = kNWarps * 32;
  static constexpr int kRowBytes = kHeadDim * 2;
  static constexpr int kScoreRowBytes = kBlockN * 2;  // a dS row: kBlockN 16-bit keys
  static constexpr int kChunksPerRow = kHeadDim / 8;
  static constexpr int kRowsPerPass = kNThreads / kChunksPerRow;
  static constexpr int kKvTileBytes = kBlockN * kRowBytes;  // K or V
  static constexpr int kQTileBytes = kBlockM * kRowBytes;   // Q or dO
  static constexpr int kDsBytes = kBlockM * kBlockN * 2;    // dS, [query][key]
  static constexpr int kStatsBytes = 2 * kBlockM * 4;       // LSE and delta of the step's queries
  static constexpr int kSmemBytes = 2 * kKvTileBytes + 2 * kQTileBytes + kDsBytes + kStatsBytes;

  static_assert(kNWarps * 16 == kBlockN, "each warp owns 16 keys");
  static_assert(kNWarps % kDqRowTiles == 0 && (kHeadDim / 8) % kDqColParts == 0 && kDqColTiles % 2 == 0,
                "dQ's tiles split evenly over the warps");
  static_assert(kHeadDim % 64 == 0, "swizzle needs at least 8 chunks of 16 bytes per row");
  static_assert(kBlockN * 2 == 128, "dS rows are one 8-chunk swizzle");
  static_assert(kRowsPerPass % 8 == 0 && kBlockM % kRowsPerPass == 0, "whole cp.async passes");
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
  float* dq_accum;     // [B, Hq, Sq, D], zeroed; gets dS K (unscaled)
  T* dk;               // [B, Hkv, Skv, D]
  T* dv;
};

template <typename Traits, typename T, bool kCausal>
__global__ void __launch_bounds__(Traits::kNThreads)
    flash_bwd_kernel(const FlashBwdArgs<T> a) {
  constexpr int D = Traits::kHeadDim;
  constexpr int kBlockM = Traits::kBlockM;
  constexpr int kBlockN = Traits::kBlockN;
  constexpr int kRowBytes = Traits::kRowBytes;
  constexpr int kNTilesS = kBlockM / 8;  // n8 tiles of S^T (queries) per warp
  constexpr int kNTilesD = D / 8;        // n8 tiles of dK, dV, dQ
  constexpr float kLog2e = 1.4426950408889634f;

  extern __shared__ __align__(128) unsigned char smem[];
  constexpr int kDsOffset = 2 * Traits::kKvTileBytes + 2 * Traits::kQTileBytes;
  const uint32_t s_k = shared_address(smem);
  const uint32_t s_v = s_k + Traits::kKvTileBytes;
  const uint32_t s_q = s_v + Traits::kKvTileBytes;
  const uint32_t s_do = s_q + Traits::kQTileBytes;
  const uint32_t s_ds = s_k + kDsOffset;
  unsigned char* ds_bytes = smem + kDsOffset;
  float* s_lse = reinterpret_cast<float*>(smem + kDsOffset + Traits::kDsBytes);
  float* s_delta = s_lse + kBlockM;

  const AttentionShape& p = a.p;
  const int seq_q = static_cast<int>(p.seq_q);
  const int seq_kv = static_cast<int>(p.seq_kv);
  const int n0 = static_cast<int>(blockIdx.x) * kBlockN;
  const int kv_head = static_cast<int>(blockIdx.y);
  const int batch = static_cast<int>(blockIdx.z);
  const int group = static_cast<int>(p.heads / p.kv_heads);
  const float scale_log2 = p.scale * kLog2e;
  const int64_t kv_offset = ((static_cast<int64_t>(batch) * p.kv_heads + kv_head) * p.seq_kv + n0) * D;

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int g = lane / 4;
  const int t = lane % 4;
  const int warp_key0 = warp * 16;  // the warp's first key row in the block

  // cp.async: consecutive threads copy consecutive 16-byte chunks of a row.
  const int ld_row = tid / Traits::kChunksPerRow;
  const int ld_chunk = tid % Traits::kChunksPerRow;
  const uint32_t ld_smem = ld_row * kRowBytes + ((ld_chunk ^ (ld_row & 7)) * 16);
  auto load_tile = [&](uint32_t s_tile, const T* g_tile, int rows, int valid_rows) {
#pragma unroll 4
    for (int pass = 0; pass < rows / Traits::kRowsPerPass; ++pass) {
      const int r = pass * Traits::kRowsPerPass;
      const bool valid = ld_row + r < valid_rows;
      cp_async_16(s_tile + ld_smem + r * kRowBytes,
                  valid ? g_tile + (ld_row + r) * D + ld_chunk * 8 : g_tile, valid);
    }
  };

  // ldmatrix lane addresses (as the forward's): A operands and trans B operands read rows
  // lane%8 + 8*((lane/8)%2), chunk half lane/16; non-trans B operands rows lane%8 + 8*(lane/16),
  // half (lane/8)%2.
  const int a_row = (lane % 8) + 8 * ((lane / 8) % 2);
  const int b_row = (lane % 8) + 8 * (lane / 16);
  const uint32_t a_phase = ((lane / 16) ^ (lane % 8)) * 16;
  const uint32_t b_phase = (((lane / 8) % 2) ^ (lane % 8)) * 16;
  const uint32_t k_a = (s_k + (warp_key0 + a_row) * kRowBytes) | a_phase;  // K rows as A
  const uint32_t v_a = (s_v + (warp_key0 + a_row) * kRowBytes) | a_phase;  // V rows as A
  const uint32_t q_b = (s_q + b_row * kRowBytes) | b_phase;                 // Q as B of K Q^T
  const uint32_t do_b = (s_do + b_row * kRowBytes) | b_phase;               // dO as B of V dO^T
  const uint32_t q_bt = (s_q + a_row * kRowBytes) | a_phase;                // Q as B of dS^T Q
  const uint32_t do_bt = (s_do + a_row * kRowBytes) | a_phase;              // dO as B of P^T dO
  const uint32_t k_bt = (s_k + a_row * kRowBytes) | a_phase;                // K as B of dS K

  load_tile(s_k, a.k + kv_offset, kBlockN, seq_kv - n0);
  load_tile(s_v, a.v + kv_offset, kBlockN, seq_kv - n0);
  cp_async_commit();

  float acc_dk[kNTilesD][4];
  float acc_dv[kNTilesD][4];
#pragma unroll
  for (int nt = 0; nt < kNTilesD; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc_dk[nt][e] = acc_dv[nt][e] = 0.f;

  // Top-left causal: query m sees key n when n <= m, so the block's first query block is the one
  // holding query n0.
  const int m_block_first = kCausal ? n0 / kBlockM : 0;
  const int m_blocks = (seq_q + kBlockM - 1) / kBlockM;
  for (int h = 0; h < group; ++h) {
    const int head = kv_head * group + h;
    const int64_t row0 = (static_cast<int64_t>(batch) * p.heads + head) * p.seq_q;  // of query 0
    for (int mb = m_block_first; mb < m_blocks; ++mb) {
      const int m0 = mb * kBlockM;
      __syncthreads();  // every warp is done with the last step's Q, dO, dS and statistics
      load_tile(s_q, a.q + (row0 + m0) * D, kBlockM, seq_q - m0);
      load_tile(s_do, a.d_out + (row0 + m0) * D, kBlockM, seq_q - m0);
      cp_async_commit();
      for (int r = tid; r < kBlockM; r += Traits::kNThreads) {
        const bool valid = m0 + r < seq_q;
        s_lse[r] = valid ? a.lse[row0 + m0 + r] : INFINITY;  // P = 0 for rows past the end
        s_delta[r] = valid ? a.delta[row0 + m0 + r] : 0.f;
      }
      cp_async_wait<0>();
      __syncthreads();

      // S^T = K Q^T and dP^T = V dO^T: 16 keys by kBlockM queries per warp.
      float acc_s[kNTilesS][4];
      float acc_dp[kNTilesS][4];
#pragma unroll
      for (int nt = 0; nt < kNTilesS; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc_s[nt][e] = acc_dp[nt][e] = 0.f;
#pragma unroll
      for (int ks = 0; ks < D / 16; ++ks) {
        uint32_t ka[4];
        uint32_t va[4];
        ldmatrix_x4(ka, swizzled_pair(k_a, ks));
        ldmatrix_x4(va, swizzled_pair(v_a, ks));
#pragma unroll
        for (int n16 = 0; n16 < kBlockM / 16; ++n16) {
          uint32_t qb[4];
          uint32_t dob[4];
          ldmatrix_x4(qb, swizzled_pair(q_b, ks) + n16 * 16 * kRowBytes);
          ldmatrix_x4(dob, swizzled_pair(do_b, ks) + n16 * 16 * kRowBytes);
          mma_16816<T>(acc_s[2 * n16], ka, qb[0], qb[1]);
          mma_16816<T>(acc_s[2 * n16 + 1], ka, qb[2], qb[3]);
          mma_16816<T>(acc_dp[2 * n16], va, dob[0], dob[1]);
          mma_16816<T>(acc_dp[2 * n16 + 1], va, dob[2], dob[3]);
        }
      }

      // P^T and dS^T = P^T * (dP^T - delta). Element (nt, e) is key n0 + warp_key0 + g + (e/2)*8
      // and query m0 + nt*8 + 2t + e%2.
#pragma unroll
      for (int nt = 0; nt < kNTilesS; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = n0 + warp_key0 + g + (e / 2) * 8;
          const int m_local = nt * 8 + 2 * t + e % 2;
          const bool hidden = key >= seq_kv || (kCausal && key > m0 + m_local);
          const float prob = hidden ? 0.f : fast_exp2(acc_s[nt][e] * scale_log2 - s_lse[m_local]);
          acc_s[nt][e] = prob;
          acc_dp[nt][e] = prob * (acc_dp[nt][e] - s_delta[m_local]);
        }

      // dS^T into shared memory as dS [query][key] (16-bit, rows of kBlockN keys, swizzled), for
      // dQ. Element (nt, e): row m_local, column warp_key0 + g + (e/2)*8.
#pragma unroll
      for (int nt = 0; nt < kNTilesS; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int m_local = nt * 8 + 2 * t + e % 2;
          const int n_local = warp_key0 + g + (e / 2) * 8;
          const uint32_t packed = pack2<T>(acc_dp[nt][e], 0.f);
          *reinterpret_cast<uint16_t*>(ds_bytes + m_local * Traits::kScoreRowBytes +
                                       (((n_local / 8) ^ (m_local % 8)) * 16) + (n_local % 8) * 2) =
              static_cast<uint16_t>(packed & 0xffffu);
        }

      // P^T and dS^T as A operands (keys by queries), packed now so the fp32 tiles die before
      // the dK and dV MMAs.
      uint32_t pa[kBlockM / 16][4];
      uint32_t dsa[kBlockM / 16][4];
#pragma unroll
      for (int kk = 0; kk < kBlockM / 16; ++kk) {
        pa[kk][0] = pack2<T>(acc_s[2 * kk][0], acc_s[2 * kk][1]);
        pa[kk][1] = pack2<T>(acc_s[2 * kk][2], acc_s[2 * kk][3]);
        pa[kk][2] = pack2<T>(acc_s[2 * kk + 1][0], acc_s[2 * kk + 1][1]);
        pa[kk][3] = pack2<T>(acc_s[2 * kk + 1][2], acc_s[2 * kk + 1][3]);
        dsa[kk][0] = pack2<T>(acc_dp[2 * kk][0], acc_dp[2 * kk][1]);
        dsa[kk][1] = pack2<T>(acc_dp[2 * kk][2], acc_dp[2 * kk][3]);
        dsa[kk][2] = pack2<T>(acc_dp[2 * kk + 1][0], acc_dp[2 * kk + 1][1]);
        dsa[kk][3] = pack2<T>(acc_dp[2 * kk + 1][2], acc_dp[2 * kk + 1][3]);
      }

      // dV += P^T dO and dK += dS^T Q, with Q and dO read transposed (queries are the k dimension).
#pragma unroll
      for (int kk = 0; kk < kBlockM / 16; ++kk) {
#pragma unroll
        for (int d16 = 0; d16 < D / 16; ++d16) {
          uint32_t dob[4];
          uint32_t qb[4];
          ldmatrix_x4_trans(dob, swizzled_pair(do_bt, d16) + kk * 16 * kRowBytes);
          ldmatrix_x4_trans(qb, swizzled_pair(q_bt, d16) + kk * 16 * kRowBytes);
          mma_16816<T>(acc_dv[2 * d16], pa[kk], dob[0], dob[1]);
          mma_16816<T>(acc_dv[2 * d16 + 1], pa[kk], dob[2], dob[3]);
          mma_16816<T>(acc_dk[2 * d16], dsa[kk], qb[0], qb[1]);
          mma_16816<T>(acc_dk[2 * d16 + 1], dsa[kk], qb[2], qb[3]);
        }
      }
      __syncthreads();  // dS complete in shared memory

      // dQ += dS K over the block's keys: warp w takes m16 row tile w % kDqRowTiles of the step
      // and the head dim's part w / kDqRowTiles.
      {
        constexpr int kColTiles = Traits::kDqColTiles;
        const int dq_row0 = (warp % Traits::kDqRowTiles) * 16;
        const int dq_col_tile0 = (warp / Traits::kDqRowTiles) * kColTiles;  // in n8 tiles
        const uint32_t ds_a = (s_ds + (dq_row0 + a_row) * Traits::kScoreRowBytes) | a_phase;
        float acc_dq[kColTiles][4];
#pragma unroll
        for (int nt = 0; nt < kColTiles; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc_dq[nt][e] = 0.f;
#pragma unroll
        for (int kk = 0; kk < kBlockN / 16; ++kk) {
          uint32_t dsf[4];
          ldmatrix_x4(dsf, swizzled_pair(ds_a, kk));
#pragma unroll
          for (int d16 = 0; d16 < kColTiles / 2; ++d16) {
            uint32_t kb[4];
            ldmatrix_x4_trans(kb, swizzled_pair(k_bt, dq_col_tile0 / 2 + d16) + kk * 16 * kRowBytes);
            mma_16816<T>(acc_dq[2 * d16], dsf, kb[0], kb[1]);
            mma_16816<T>(acc_dq[2 * d16 + 1], dsf, kb[2], kb[3]);
          }
        }
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int m = m0 + dq_row0 + g + half * 8;
          if (m >= seq_q) continue;
          float* dq_row = a.dq_accum + (row0 + m) * D + dq_col_tile0 * 8;
#pragma unroll
          for (int nt = 0; nt < kColTiles; ++nt) {
            atomicAdd(dq_row + nt * 8 + 2 * t, acc_dq[nt][2 * half]);
            atomicAdd(dq_row + nt * 8 + 2 * t + 1, acc_dq[nt][2 * half + 1]);
          }
        }
      }
    }
  }

  cp_async_wait<0>();  // K and V, when no query block saw this key block

  // dK = scale * dS^T Q (dS was left unscaled), dV as summed; rows past Skv are not written.
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int key = n0 + warp_key0 + g + half * 8;
    if (key >= seq_kv) continue;
    T* dk_row = a.dk + kv_offset + static_cast<int64_t>(warp_key0 + g + half * 8) * D;
    T* dv_row = a.dv + kv_offset + static_cast<int64_t>(warp_key0 + g + half * 8) * D;
#pragma unroll
    for (int nt = 0; nt < kNTilesD; ++nt) {
      *reinterpret_cast<uint32_t*>(dk_row + nt * 8 + 2 * t) =
          pack2<T>(acc_dk[nt][2 * half] * p.scale, acc_dk[nt][2 * half + 1] * p.scale);
      *reinterpret_cast<uint32_t*>(dv_row + nt * 8 + 2 * t) =
          pack2<T>(acc_dv[nt][2 * half], acc_dv[nt][2 * half + 1]);
    }
  }
}

// The main kernel for head dim kHeadDim on `b`'s dtype and causal flag: one CTA per key block of
// each (batch, KV head).
template <int kHeadDim>
cudaError_t launch_flash_backward_main(const FusedBackward& b, const float* delta, float* dq_accum) {
  using Traits = FlashBwdTraits<kHeadDim>;
  return dispatch_dtype(b.dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    auto* const causal = flash_bwd_kernel<Traits, T, true>;
    auto* const full = flash_bwd_kernel<Traits, T, false>;
    static const cudaError_t attr = [&] {
      const cudaError_t c = cudaFuncSetAttribute(causal, cudaFuncAttributeMaxDynamicSharedMemorySize, Traits::kSmemBytes);
      const cudaError_t n = cudaFuncSetAttribute(full, cudaFuncAttributeMaxDynamicSharedMemorySize, Traits::kSmemBytes);
      return c != cudaSuccess ? c : n;
    }();
    if (attr != cudaSuccess) return attr;
    const FlashBwdArgs<T> args{b.shape,
                               static_cast<const T*>(b.q),
                               static_cast<const T*>(b.k),
                               static_cast<const T*>(b.v),
                               static_cast<const T*>(b.d_out),
                               b.lse,
                               delta,
                               dq_accum,
                               static_cast<T*>(b.dk),
                               static_cast<T*>(b.dv)};
    const dim3 grid(static_cast<unsigned>((b.shape.seq_kv + Traits::kBlockN - 1) / Traits::kBlockN),
                    static_cast<unsigned>(b.shape.kv_heads), static_cast<unsigned>(b.shape.batch));
    (b.shape.causal ? causal : full)<<<grid, Traits::kNThreads, Traits::kSmemBytes, b.stream>>>(args);
    return cudaGetLastError();
  });
}

}  // namespace sdpa::flash
