// Memory-efficient attention forward (the xFormers / CUTLASS "cutlassF" structure): a CTA of
// four warps owns 64 query rows and walks the key blocks. Unlike flash, the warps split both
// dimensions of every tile (2 x 2), so a query row's scores are spread over two warps: the row
// maxima are combined through shared memory each block, P is staged in shared memory between
// the two GEMMs, and Q is re-read from shared memory for every key block.
#include <cmath>
#include <cstdint>

#include "efficient_fwd.h"
#include "fused_launch.cuh"
#include "mma_sm80.cuh"
#include "query_block.cuh"

namespace sdpa {
namespace {

// The kernel is written in mma_sm80.cuh's primitives.
using namespace sm80;

template <int kHeadDim_>
struct EfficientTraits {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockM = 64;  // query rows per CTA
  static constexpr int kBlockN = 64;  // keys per block
  static constexpr int kNThreads = 128;
  // Warp (wm, wn) computes S rows [32 wm, +32) x keys [32 wn, +32) and O rows [32 wm, +32) x
  // columns [D/2 wn, +D/2).
  static constexpr int kWarpRows = 32;
  static constexpr int kWarpKeys = 32;
  static constexpr int kWarpCols = kHeadDim / 2;
  static constexpr int kRowBytes = kHeadDim * 2;
  static constexpr int kChunksPerRow = kHeadDim / 8;
  static constexpr int kRowsPerPass = kNThreads / kChunksPerRow;
  static constexpr int kTileBytes = kBlockM * kRowBytes;  // Q, one K or one V stage (64 rows)
  static constexpr int kPBytes = kBlockM * kBlockN * 2;
  static constexpr int kQOffset = 0;
  static constexpr int kKOffset = kTileBytes;
  static constexpr int kVOffset = kKOffset + 2 * kTileBytes;
  static constexpr int kPOffset = kVOffset + 2 * kTileBytes;
  static constexpr int kStatsOffset = kPOffset + kPBytes;  // float [2][kBlockM]
  static constexpr int kSmemBytes = kStatsOffset + 2 * kBlockM * 4;

  static_assert(kHeadDim % 64 == 0, "swizzle needs at least 8 chunks of 16 bytes per row");
  static_assert(kRowsPerPass % 8 == 0 && kBlockM % kRowsPerPass == 0, "whole cp.async passes");
};

template <typename Traits, typename T, bool kCausal>
__global__ void __launch_bounds__(Traits::kNThreads, 2)
    efficient_fwd_kernel(AttentionShape p, const T* __restrict__ q, const T* __restrict__ k,
                         const T* __restrict__ v, T* __restrict__ o, float* /*lse: none kept*/) {
  constexpr int D = Traits::kHeadDim;
  constexpr int kBlockM = Traits::kBlockM;
  constexpr int kBlockN = Traits::kBlockN;
  constexpr int kRowBytes = Traits::kRowBytes;
  constexpr int kNTilesS = Traits::kWarpKeys / 8;  // n8 tiles of a warp's S
  constexpr int kNTilesO = Traits::kWarpCols / 8;  // n8 tiles of a warp's O

  extern __shared__ __align__(128) unsigned char smem[];
  float* row_max_part = reinterpret_cast<float*>(smem + Traits::kStatsOffset);  // [2][kBlockM]

  const auto [seq_q, seq_kv, m0, q_offset, kv_offset, n_blocks, scale_log2] =
      QueryBlock<Traits, kCausal>(p);

  const uint32_t s_base = shared_address(smem);
  const uint32_t s_q = s_base + Traits::kQOffset;
  const uint32_t s_k = s_base + Traits::kKOffset;
  const uint32_t s_v = s_base + Traits::kVOffset;
  const uint32_t s_p = s_base + Traits::kPOffset;

  const int tid = static_cast<int>(threadIdx.x);
  const int ld_row = tid / Traits::kChunksPerRow;
  const int ld_chunk = tid % Traits::kChunksPerRow;
  const uint32_t ld_smem = ld_row * kRowBytes + ((ld_chunk ^ (ld_row & 7)) * 16);
  auto load_tile = [&](uint32_t s_tile, const T* g_tile, int valid_rows) {
#pragma unroll
    for (int r = 0; r < kBlockM; r += Traits::kRowsPerPass) {
      const bool valid = ld_row + r < valid_rows;
      cp_async_16(s_tile + ld_smem + r * kRowBytes, valid ? g_tile + tid * 8 + r * D : g_tile,
                  valid);
    }
  };
  auto load_kv = [&](int nb) {
    const int64_t offset = kv_offset + static_cast<int64_t>(nb) * kBlockN * D;
    const uint32_t stage = (nb & 1) * Traits::kTileBytes;
    load_tile(s_k + stage, k + offset, seq_kv - nb * kBlockN);
    load_tile(s_v + stage, v + offset, seq_kv - nb * kBlockN);
  };

  load_tile(s_q, q + q_offset, seq_q - m0);
  load_kv(0);
  cp_async_commit();

  const int warp = tid / 32;
  const int lane = tid % 32;
  const int wm = warp / 2;
  const int wn = warp % 2;
  const int g = lane / 4;
  const int t = lane % 4;
  const int warp_row0 = wm * Traits::kWarpRows;

  // ldmatrix lane addresses (see mma_sm80.cuh): A operands (Q, P) and V (x4.trans) use row
  // lane%8 + 8*((lane/8)%2) and chunk half lane/16; K (x4) row lane%8 + 8*(lane/16), half
  // (lane/8)%2.
  const int a_row = (lane % 8) + 8 * ((lane / 8) % 2);
  const int k_row = (lane % 8) + 8 * (lane / 16);
  const uint32_t a_phase = ((lane / 16) ^ (lane % 8)) * 16;
  const uint32_t k_phase = (((lane / 8) % 2) ^ (lane % 8)) * 16;
  const uint32_t q_lane = (s_q + (warp_row0 + a_row) * kRowBytes) | a_phase;
  const uint32_t p_lane = (s_p + (warp_row0 + a_row) * (kBlockN * 2)) | a_phase;

  float acc_o[2][kNTilesO][4];
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNTilesO; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_o[mt][nt][e] = 0.f;
  // Running max of each of the thread's four rows (both warps of a row hold the same value)
  // and the thread's share of the row sum (its own columns only, combined at the end).
  float row_max[2][2];
  float row_sum[2][2];
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      row_max[mt][h] = -INFINITY;
      row_sum[mt][h] = 0.f;
    }

  for (int nb = 0; nb < n_blocks; ++nb) {
    const int n0 = nb * kBlockN;
    cp_async_wait<0>();
    __syncthreads();  // K_nb, V_nb visible; every warp is done with block nb - 1
    if (nb + 1 < n_blocks) load_kv(nb + 1);
    cp_async_commit();

    // S = Q K^T on the warp's 32 x 32 quarter, Q and K both from shared memory.
    float acc_s[2][kNTilesS][4];
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNTilesS; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc_s[mt][nt][e] = 0.f;
    const uint32_t k_lane =
        (s_k + (nb & 1) * Traits::kTileBytes + (wn * Traits::kWarpKeys + k_row) * kRowBytes) |
        k_phase;
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
      uint32_t a[2][4];
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
        ldmatrix_x4(a[mt], swizzled_pair(q_lane, ks) + mt * 16 * kRowBytes);
#pragma unroll
      for (int n16 = 0; n16 < Traits::kWarpKeys / 16; ++n16) {
        uint32_t b[4];
        ldmatrix_x4(b, swizzled_pair(k_lane, ks) + n16 * 16 * kRowBytes);
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) {
          mma_16816<T>(acc_s[mt][2 * n16], a[mt], b[0], b[1]);
          mma_16816<T>(acc_s[mt][2 * n16 + 1], a[mt], b[2], b[3]);
        }
      }
    }

    // Element (mt, nt, e): key n0 + 32 wn + nt*8 + 2t + e%2 of row m0 + 32 wm + mt*16 + g +
    // (e/2)*8.
    const int key0 = n0 + wn * Traits::kWarpKeys + 2 * t;
    if (n0 + kBlockN > seq_kv || (kCausal && n0 + kBlockN - 1 > m0))
      mask_scores<kCausal>(acc_s, seq_kv - key0, m0 + warp_row0 + g - key0);

      // Row maxima over this warp's 32 keys, shared with the warp holding the other 32.
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float mx = -INFINITY;
#pragma unroll
        for (int nt = 0; nt < kNTilesS; ++nt)
          mx = fmaxf(mx, fmaxf(acc_s[mt][nt][2 * h], acc_s[mt][nt][2 * h + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        if (t == 0) row_max_part[wn * kBlockM + warp_row0 + mt * 16 + g + h * 8] = mx;
      }
    __syncthreads();

    // New maxima, rescale factors, P = exp2(...) written to shared memory as 16-bit values.
    float alpha[2][2];
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = warp_row0 + mt * 16 + g + h * 8;
        const float mx =
            fmaxf(row_max[mt][h], fmaxf(row_max_part[row], row_max_part[kBlockM + row]));
        // Every row sees key 0 in block 0, so mx is finite; the guard keeps exp2 off inf - inf.
        const float mx_scaled = mx == -INFINITY ? 0.f : mx * scale_log2;
        alpha[mt][h] = fast_exp2(row_max[mt][h] * scale_log2 - mx_scaled);
        row_max[mt][h] = mx;
        float sum = 0.f;
#pragma unroll
        for (int nt = 0; nt < kNTilesS; ++nt) {
          const float p0 = fast_exp2(fmaf(acc_s[mt][nt][2 * h], scale_log2, -mx_scaled));
          const float p1 = fast_exp2(fmaf(acc_s[mt][nt][2 * h + 1], scale_log2, -mx_scaled));
          sum += p0 + p1;
          // P is [kBlockM][kBlockN] 16-bit, chunk c of row r at c ^ (r % 8); here r % 8 == g.
          const int chunk = (wn * Traits::kWarpKeys + nt * 8) / 8;
          *reinterpret_cast<uint32_t*>(smem + Traits::kPOffset + row * (kBlockN * 2) +
                                       ((chunk ^ g) * 16) + t * 4) = pack2<T>(p0, p1);
        }
        row_sum[mt][h] = row_sum[mt][h] * alpha[mt][h] + sum;
      }
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNTilesO; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc_o[mt][nt][e] *= alpha[mt][e / 2];
    __syncthreads();  // P complete; every warp has read the partial maxima

    // O += P V on the warp's 32 rows x D/2 columns, P and V both from shared memory.
    const uint32_t v_lane = (s_v + (nb & 1) * Traits::kTileBytes + a_row * kRowBytes) | a_phase;
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      uint32_t a[2][4];
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
        ldmatrix_x4(a[mt], swizzled_pair(p_lane, kk) + mt * 16 * (kBlockN * 2));
#pragma unroll
      for (int d16 = 0; d16 < Traits::kWarpCols / 16; ++d16) {
        uint32_t b[4];
        ldmatrix_x4_trans(
            b, swizzled_pair(v_lane, wn * (Traits::kWarpCols / 16) + d16) + kk * 16 * kRowBytes);
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) {
          mma_16816<T>(acc_o[mt][2 * d16], a[mt], b[0], b[1]);
          mma_16816<T>(acc_o[mt][2 * d16 + 1], a[mt], b[2], b[3]);
        }
      }
    }
  }
  cp_async_wait<0>();

  // Row sums: the thread's share, then its quad, then the two warps of the row.
  float* row_sum_part = row_max_part;
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float sum = row_sum[mt][h];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      row_sum[mt][h] = sum;
    }
  __syncthreads();  // every warp is done with the partial maxima and with Q
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      if (t == 0) row_sum_part[wn * kBlockM + warp_row0 + mt * 16 + g + h * 8] = row_sum[mt][h];
  __syncthreads();

  // Normalise and stage O in the Q tile, then write it with 16-byte stores.
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = warp_row0 + mt * 16 + g + h * 8;
      const float sum = row_sum_part[row] + row_sum_part[kBlockM + row];
      const float inv = sum > 0.f ? 1.f / sum : 0.f;
#pragma unroll
      for (int nt = 0; nt < kNTilesO; ++nt) {
        const int chunk = wn * (Traits::kWarpCols / 8) + nt;
        *reinterpret_cast<uint32_t*>(smem + Traits::kQOffset + row * kRowBytes +
                                     ((chunk ^ g) * 16) + t * 4) =
            pack2<T>(acc_o[mt][nt][2 * h] * inv, acc_o[mt][nt][2 * h + 1] * inv);
      }
    }
  __syncthreads();
  T* o_tile = o + q_offset;
#pragma unroll
  for (int r = 0; r < kBlockM; r += Traits::kRowsPerPass) {
    const int row = r + ld_row;
    const uint4 val = *reinterpret_cast<const uint4*>(smem + Traits::kQOffset + row * kRowBytes +
                                                      ((ld_chunk ^ (row & 7)) * 16));
    if (m0 + row < seq_q) *reinterpret_cast<uint4*>(o_tile + row * D + ld_chunk * 8) = val;
  }
}

// The head dims the kernel is compiled for.
using EfficientHeadDims = IntList<64, 128>;

constexpr auto kHeadDims = fused_head_dim_table(
    EfficientHeadDims{}, [](auto d) { return EfficientTraits<decltype(d)::value>::kSmemBytes; });

cudaError_t launch_efficient_forward(const FusedForward& f) {
  return launch_within_limits(EfficientHeadDims{}, kEfficientForward.limits, f, [&](auto d) {
    using Traits = EfficientTraits<decltype(d)::value>;
    return launch_fused_forward<Traits>(
        [](auto type, auto causal) {
          return efficient_fwd_kernel<Traits, typename decltype(type)::type,
                                      decltype(causal)::value>;
        },
        f);
  });
}

}  // namespace

constexpr FusedForwardKernel kEfficientForward{sm80_query_block_limits(kHeadDims),
                                               launch_efficient_forward};

}  // namespace sdpa
