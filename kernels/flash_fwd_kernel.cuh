// FlashAttention-2 forward for sm_80 and newer: one CTA per kBlockM query rows of one
// (batch, head); each warp owns kWarpRows rows. K and V tiles stream through swizzled shared
// memory with cp.async, two stages each; S = Q K^T and O += P V run on mma.sync m16n8k16 with
// ldmatrix operands and fp32 accumulators; the online softmax stays in registers and P is
// converted in registers into the A operand of the second MMA.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "attention_shape.h"
#include "flash_traits.cuh"
#include "fused_launch.cuh"
#include "mma_sm80.cuh"
#include "query_block.cuh"

namespace sdpa::flash {

// The kernel is written in mma_sm80.cuh's primitives.
using namespace sm80;

template <typename Traits, typename T, bool kCausal>
__global__ void __launch_bounds__(Traits::kNThreads, Traits::kMinBlocksPerSm)
    flash_fwd_kernel(AttentionShape p, const T* __restrict__ q, const T* __restrict__ k,
                     const T* __restrict__ v, T* __restrict__ o, float* __restrict__ lse) {
  constexpr int D = Traits::kHeadDim;
  constexpr int kBlockM = Traits::kBlockM;
  constexpr int kBlockN = Traits::kBlockN;
  constexpr int kMTiles = Traits::kMTiles;
  constexpr int kRowBytes = Traits::kRowBytes;

  extern __shared__ __align__(128) unsigned char smem[];

  const auto [seq_q, seq_kv, m0, q_offset, kv_offset, n_blocks, scale_log2] =
      QueryBlock<Traits, kCausal>(p);
  const T* q_tile = q + q_offset;
  T* o_tile = o + q_offset;

  const uint32_t s_q = shared_address(smem);
  const uint32_t s_k = s_q + Traits::kQBytes;
  const uint32_t s_v = s_k + 2 * Traits::kTileBytes;

  // cp.async: consecutive threads copy consecutive 16-byte chunks of a row.
  const int tid = static_cast<int>(threadIdx.x);
  const int ld_row = tid / Traits::kChunksPerRow;
  const int ld_chunk = tid % Traits::kChunksPerRow;
  const uint32_t ld_smem = ld_row * kRowBytes + ((ld_chunk ^ (ld_row & 7)) * 16);
  const int ld_gmem = tid * 8;  // = ld_row * D + ld_chunk * 8
  auto load_tile = [&](uint32_t s_tile, const T* g_tile, int rows, int valid_rows) {
#pragma unroll
    for (int pass = 0; pass < rows / Traits::kRowsPerPass; ++pass) {
      const int r = pass * Traits::kRowsPerPass;
      const bool valid = ld_row + r < valid_rows;
      cp_async_16(s_tile + ld_smem + r * kRowBytes, valid ? g_tile + ld_gmem + r * D : g_tile,
                  valid);
    }
  };
  auto load_k = [&](int nb) {
    load_tile(s_k + (nb & 1) * Traits::kTileBytes,
              k + kv_offset + static_cast<int64_t>(nb) * kBlockN * D, kBlockN,
              seq_kv - nb * kBlockN);
  };
  auto load_v = [&](int nb) {
    load_tile(s_v + (nb & 1) * Traits::kTileBytes,
              v + kv_offset + static_cast<int64_t>(nb) * kBlockN * D, kBlockN,
              seq_kv - nb * kBlockN);
  };

  // Groups in flight: {Q, K0}, {V0}, {K1}; the loop then keeps two groups behind the one it
  // waits for (V_{n+1} is issued once K_n has landed, K_{n+2} once V_n has).
  load_tile(s_q, q_tile, kBlockM, seq_q - m0);
  load_k(0);
  cp_async_commit();
  load_v(0);
  cp_async_commit();
  if (n_blocks > 1) load_k(1);
  cp_async_commit();

  const int warp = tid / 32;
  const int lane = tid % 32;
  const int g = lane / 4;  // accumulator row within an m16 tile (and g + 8)
  const int t = lane % 4;  // accumulator column pair
  const int warp_row0 = warp * Traits::kWarpRows;

  // ldmatrix lane addresses. Q (A, x4) and V (B, x4.trans): row lane%8 + 8*((lane/8)%2),
  // chunk pair half lane/16. K (B, x4): row lane%8 + 8*(lane/16), half (lane/8)%2.
  const int qv_row = (lane % 8) + 8 * ((lane / 8) % 2);
  const int k_row = (lane % 8) + 8 * (lane / 16);
  const uint32_t qv_phase = ((lane / 16) ^ (lane % 8)) * 16;
  const uint32_t k_phase = (((lane / 8) % 2) ^ (lane % 8)) * 16;
  const uint32_t q_lane = (s_q + (warp_row0 + qv_row) * kRowBytes) | qv_phase;

  auto load_q_frag = [&](uint32_t(&a)[4], int mt, int ks) {
    ldmatrix_x4(a, swizzled_pair(q_lane, ks) + mt * 16 * kRowBytes);
  };

  uint32_t q_frag[Traits::kQInRegs ? kMTiles : 1][Traits::kQInRegs ? Traits::kKSteps : 1][4];
  if constexpr (Traits::kQInRegs) {
    cp_async_wait<2>();
    __syncthreads();
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int ks = 0; ks < Traits::kKSteps; ++ks) load_q_frag(q_frag[mt][ks], mt, ks);
  }

  float acc_o[kMTiles][Traits::kNTilesO][4];
  float row_max[kMTiles][2];
  float row_sum[kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int nt = 0; nt < Traits::kNTilesO; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_o[mt][nt][e] = 0.f;
    row_max[mt][0] = row_max[mt][1] = -INFINITY;
    row_sum[mt][0] = row_sum[mt][1] = 0.f;
  }

  for (int nb = 0; nb < n_blocks; ++nb) {
    const int n0 = nb * kBlockN;
    const uint32_t k_lane = (s_k + (nb & 1) * Traits::kTileBytes + k_row * kRowBytes) | k_phase;
    const uint32_t v_lane = (s_v + (nb & 1) * Traits::kTileBytes + qv_row * kRowBytes) | qv_phase;

    cp_async_wait<2>();  // K_nb landed
    __syncthreads();     // ... for every thread, and every warp is done with V_{nb-1}
    if (nb + 1 < n_blocks) load_v(nb + 1);
    cp_async_commit();

    // A warp whose rows all lie above this key block's first key has nothing to add here.
    const bool active = !kCausal || n0 < m0 + warp_row0 + Traits::kWarpRows;
    // P of keys 16kk..16kk+15, packed in pairs: the A operand of P V, converted as soon as the
    // softmax is done so the fp32 scores are dead before the second MMA.
    uint32_t p_frag[kMTiles][kBlockN / 16][4];
    if (active) {
      float acc_s[kMTiles][Traits::kNTilesS][4];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int nt = 0; nt < Traits::kNTilesS; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc_s[mt][nt][e] = 0.f;

#pragma unroll
      for (int ks = 0; ks < Traits::kKSteps; ++ks) {
        uint32_t a[kMTiles][4];
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          if constexpr (Traits::kQInRegs) {
#pragma unroll
            for (int e = 0; e < 4; ++e) a[mt][e] = q_frag[mt][ks][e];
          } else {
            load_q_frag(a[mt], mt, ks);
          }
        }
#pragma unroll
        for (int n16 = 0; n16 < kBlockN / 16; ++n16) {
          uint32_t b[4];
          ldmatrix_x4(b, swizzled_pair(k_lane, ks) + n16 * 16 * kRowBytes);
#pragma unroll
          for (int mt = 0; mt < kMTiles; ++mt) {
            mma_16816<T>(acc_s[mt][2 * n16], a[mt], b[0], b[1]);
            mma_16816<T>(acc_s[mt][2 * n16 + 1], a[mt], b[2], b[3]);
          }
        }
      }

      // Keys past the end, and causal keys after the query, score -inf. Element (mt, nt, e) is
      // key n0 + 2t + nt*8 + e%2 of query m0 + warp_row0 + g + mt*16 + (e/2)*8.
      if (n0 + kBlockN > seq_kv || (kCausal && n0 + kBlockN - 1 > m0 + warp_row0))
        mask_scores<kCausal>(acc_s, seq_kv - n0 - 2 * t, m0 + warp_row0 + g - n0 - 2 * t);

      // Online softmax on rows g and g + 8 of each m16 tile; 4 lanes share a row. Maxima and
      // sums run as two interleaved chains so dependent instructions do not stall every step.
      bool rescale = false;
      float alpha[kMTiles][2];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          float mx0 = row_max[mt][half];
          float mx1 = -INFINITY;
#pragma unroll
          for (int nt = 0; nt < Traits::kNTilesS; nt += 2) {
            mx0 = fmaxf(mx0, fmaxf(acc_s[mt][nt][2 * half], acc_s[mt][nt][2 * half + 1]));
            mx1 = fmaxf(mx1, fmaxf(acc_s[mt][nt + 1][2 * half], acc_s[mt][nt + 1][2 * half + 1]));
          }
          float mx = fmaxf(mx0, mx1);
          mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
          mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
          // A row with every key masked so far keeps max -inf; subtract 0 so exp2 gives 0.
          const float mx_scaled = mx == -INFINITY ? 0.f : mx * scale_log2;
          alpha[mt][half] = fast_exp2(row_max[mt][half] * scale_log2 - mx_scaled);
          rescale |= mx != row_max[mt][half];
          row_max[mt][half] = mx;
          float sum0 = 0.f;
          float sum1 = 0.f;
#pragma unroll
          for (int nt = 0; nt < Traits::kNTilesS; ++nt) {
            float& s0 = acc_s[mt][nt][2 * half];
            float& s1 = acc_s[mt][nt][2 * half + 1];
            s0 = fast_exp2(fmaf(s0, scale_log2, -mx_scaled));
            s1 = fast_exp2(fmaf(s1, scale_log2, -mx_scaled));
            sum0 += s0;
            sum1 += s1;
          }
          row_sum[mt][half] = row_sum[mt][half] * alpha[mt][half] + (sum0 + sum1);
        }
      // Once the row maxima settle, most blocks change none of them: skip the O rescale then.
      if (__any_sync(0xffffffffu, rescale)) {
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
          for (int nt = 0; nt < Traits::kNTilesO; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc_o[mt][nt][e] *= alpha[mt][e / 2];
      }
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int kk = 0; kk < kBlockN / 16; ++kk) {
          p_frag[mt][kk][0] = pack2<T>(acc_s[mt][2 * kk][0], acc_s[mt][2 * kk][1]);
          p_frag[mt][kk][1] = pack2<T>(acc_s[mt][2 * kk][2], acc_s[mt][2 * kk][3]);
          p_frag[mt][kk][2] = pack2<T>(acc_s[mt][2 * kk + 1][0], acc_s[mt][2 * kk + 1][1]);
          p_frag[mt][kk][3] = pack2<T>(acc_s[mt][2 * kk + 1][2], acc_s[mt][2 * kk + 1][3]);
        }
    }

    cp_async_wait<2>();  // V_nb landed
    __syncthreads();     // ... for every thread, and every warp is done with K_nb
    if (nb + 2 < n_blocks) load_k(nb + 2);
    cp_async_commit();

    if (active) {
#pragma unroll
      for (int kk = 0; kk < kBlockN / 16; ++kk)
#pragma unroll
        for (int d16 = 0; d16 < D / 16; ++d16) {
          uint32_t b[4];
          ldmatrix_x4_trans(b, swizzled_pair(v_lane, d16) + kk * 16 * kRowBytes);
#pragma unroll
          for (int mt = 0; mt < kMTiles; ++mt) {
            mma_16816<T>(acc_o[mt][2 * d16], p_frag[mt][kk], b[0], b[1]);
            mma_16816<T>(acc_o[mt][2 * d16 + 1], p_frag[mt][kk], b[2], b[3]);
          }
        }
    }
  }
  cp_async_wait<0>();

  // Epilogue: normalise, stage the warp's rows in its own part of the Q tile (only this warp
  // reads those rows), then write O with 16-byte stores.
  __syncwarp();
  unsigned char* s_o = smem + warp_row0 * kRowBytes;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float sum = row_sum[mt][half];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const float inv = sum > 0.f ? 1.f / sum : 0.f;
      const int row = mt * 16 + g + half * 8;
      // The row's statistics for a backward, in exp2 units (P = exp2(s * scale_log2 - lse)).
      if (lse != nullptr && t == 0 && m0 + warp_row0 + row < seq_q)
        lse[q_offset / D + warp_row0 + row] = row_max[mt][half] * scale_log2 + __log2f(sum);
#pragma unroll
      for (int nt = 0; nt < Traits::kNTilesO; ++nt) {
        const uint32_t packed =
            pack2<T>(acc_o[mt][nt][2 * half] * inv, acc_o[mt][nt][2 * half + 1] * inv);
        *reinterpret_cast<uint32_t*>(s_o + row * kRowBytes + ((nt ^ g) * 16) + t * 4) = packed;
      }
    }
  __syncwarp();
  constexpr int kRowsPerStore = 32 / Traits::kChunksPerRow;
  const int st_chunk = lane % Traits::kChunksPerRow;
#pragma unroll
  for (int r0 = 0; r0 < Traits::kWarpRows; r0 += kRowsPerStore) {
    const int row = r0 + lane / Traits::kChunksPerRow;
    const uint4 val =
        *reinterpret_cast<const uint4*>(s_o + row * kRowBytes + ((st_chunk ^ (row & 7)) * 16));
    if (m0 + warp_row0 + row < seq_q)
      *reinterpret_cast<uint4*>(o_tile + (warp_row0 + row) * D + st_chunk * 8) = val;
  }
}

template <int kHeadDim>
cudaError_t launch_flash_forward_hdim(const FusedForward& f) {
  using Traits = typename FlashFwdConfig<kHeadDim>::Traits;
  return launch_fused_forward<Traits>(
      [](auto type, auto causal) {
        return flash_fwd_kernel<Traits, typename decltype(type)::type, decltype(causal)::value>;
      },
      f);
}

}  // namespace sdpa::flash
