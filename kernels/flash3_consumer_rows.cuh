// One consumer warpgroup's rows of a flash3 tile: the GEMM issues, the mask, the online softmax
// and the conversion of P, which the schedules of flash3_mainloop.cuh are made of.
#pragma once

#include <cmath>
#include <cstdint>

#include "flash3_traits.cuh"
#include "mma_sm80.cuh"
#include "mma_sm90.cuh"

namespace sdpa::flash3 {

using namespace sm90;
using sm80::fast_exp2;
using sm80::mask_scores;
using sm80::pack2;

// One consumer warpgroup's view of its 64 rows: the GEMM issues, the mask, the online softmax
// and the conversion of P, shared by the schedules. Accumulator 4j + e of an m64nN tile is
// column 8j + 2t + e%2 of row row0 + (e/2)*8: the layout of m16n8 tiles.
template <typename Traits, typename T, bool kCausal>
struct ConsumerRows {
  static constexpr int D = Traits::kHeadDim;
  static constexpr int kBlockN = Traits::kBlockN;
  static constexpr int kSAcc = kBlockN / 2;  // S accumulators per thread (m64n128)
  static constexpr int kOAcc = D / 2;        // O accumulators per thread
  static constexpr int kQColBytes = Traits::kBlockM * 128;
  static constexpr int kKVColBytes = kBlockN * 128;

  uint32_t q_wg;  // the warpgroup's rows of the Q tile
  int wg_row0;
  int warp_row0;  // the first of the warp's 16 rows
  int row0;       // the thread's rows: row0 and row0 + 8
  int t;
  int seq_kv;
  float scale_log2;
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.f, 0.f};

  __device__ __forceinline__ void issue_qk(float (&acc_s)[kSAcc], uint32_t k_stage) const {
    const uint64_t q_desc = smem_descriptor(q_wg, 16, 1024);
    const uint64_t k_desc = smem_descriptor(k_stage, 16, 1024);
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks)
      wgmma_ss_n128<T>(acc_s, descriptor_at(q_desc, (ks / 4) * kQColBytes + (ks % 4) * 32),
                       descriptor_at(k_desc, (ks / 4) * kKVColBytes + (ks % 4) * 32),
                       ks > 0 ? 1 : 0);
    wgmma_commit();
  }

  __device__ __forceinline__ void issue_pv(float (&acc_o)[kOAcc],
                                           const uint32_t (&p_frag)[kBlockN / 16][4],
                                           uint32_t v_stage) const {
    const uint64_t v_desc = smem_descriptor(v_stage, kKVColBytes, 1024);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk)
      wgmma_rs<T, D>(acc_o, p_frag[kk], descriptor_at(v_desc, kk * 16 * 128), 1);
    wgmma_commit();
  }

  // Keys past the end, and causal keys after the query, score -inf; then the online softmax on
  // rows g and g + 8 (the 4 lanes of a quad share a row), S turned into unnormalised P in place.
  // alpha rescales what O holds to the new row maxima; false when no row max in the warp moved.
  __device__ __forceinline__ bool softmax(float (&acc_s)[kSAcc], int n0, float (&alpha)[2]) {
    const bool needs_mask = n0 + kBlockN > seq_kv || (kCausal && n0 + kBlockN - 1 > wg_row0);
    if constexpr (kSkipDeadKeys) {
      if (needs_mask) return softmax_rows<true>(acc_s, n0, alpha);
    } else if (needs_mask) {
      mask_scores<kCausal>(reinterpret_cast<float(&)[1][kBlockN / 8][4]>(acc_s),
                           seq_kv - n0 - 2 * t, row0 - n0 - 2 * t);
    }
    return softmax_rows<false>(acc_s, n0, alpha);
  }

  // Keys of a block that some row of the warp sees: past them every score of the warp is
  // masked, so whole groups of kGroupKeys keys get P = 0 without their exponentials (the
  // blocks on the causal diagonal and at the end of the keys). Not in the serial schedule, which
  // ran 6% slower causal with it (docs/kernel-notes.md); groups of 32 keys spill in
  // the three-consumer overlapped schedule.
  static constexpr bool kSkipDeadKeys = Traits::kSchedule != Flash3Schedule::serial;
  static constexpr int kGroupKeys = 64;
  static constexpr int kGroups = kBlockN / kGroupKeys;
  static constexpr int kTilesPerGroup = kGroupKeys / 8;

  // Causal key blocks, of a query tile's n_blocks, that some row of the warpgroup sees (the
  // last ones to run: the blocks run from the last to the first), and at least one.
  __device__ __forceinline__ int live_blocks(int n_blocks, int seq_q) const {
    static_assert(kCausal, "without the mask every row sees every block");
    if (wg_row0 >= seq_q) return 1;
    return min(n_blocks, (min(wg_row0 + Traits::kWGRows, seq_kv) + kBlockN - 1) / kBlockN);
  }

  __device__ __forceinline__ int warp_live_keys(int n0) const {
    int live = seq_kv - n0;
    if constexpr (kCausal) live = min(live, warp_row0 + 16 - n0);
    return static_cast<int>(warp_uniform(static_cast<uint32_t>(max(live, 0))));
  }

  // kMasked: mask the scores and skip the groups of keys the warp sees none of.
  template <bool kMasked>
  __device__ __forceinline__ bool softmax_rows(float (&acc_s)[kSAcc], int n0, float (&alpha)[2]) {
    auto& tiles = reinterpret_cast<float(&)[1][kBlockN / 8][4]>(acc_s);
    int live_keys = kBlockN;
    if constexpr (kMasked) {
      mask_scores<kCausal>(tiles, seq_kv - n0 - 2 * t, row0 - n0 - 2 * t);
      live_keys = warp_live_keys(n0);
    }
    const auto live = [&](int group) { return !kMasked || group * kGroupKeys < live_keys; };
    bool rescale = false;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      // The row's maximum and sum as trees, not chains: fewer dependent steps for a warp to
      // wait on between the exponentials.
      float part[4] = {row_max[half], -INFINITY, -INFINITY, -INFINITY};
#pragma unroll
      for (int group = 0; group < kGroups; ++group) {
        if (!live(group)) continue;
#pragma unroll
        for (int j = group * kTilesPerGroup; j < (group + 1) * kTilesPerGroup; ++j)
          part[j % 4] = fmaxf(part[j % 4], fmaxf(tiles[0][j][2 * half], tiles[0][j][2 * half + 1]));
      }
      float mx = fmaxf(fmaxf(part[0], part[1]), fmaxf(part[2], part[3]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      // A row with every key masked so far keeps max -inf; subtract 0 so exp2 gives 0.
      const float mx_scaled = mx == -INFINITY ? 0.f : mx * scale_log2;
      alpha[half] = fast_exp2(row_max[half] * scale_log2 - mx_scaled);
      rescale |= mx != row_max[half];
      row_max[half] = mx;
      float sum[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int group = 0; group < kGroups; ++group) {
#pragma unroll
        for (int j = group * kTilesPerGroup; j < (group + 1) * kTilesPerGroup; ++j) {
          float& s0 = tiles[0][j][2 * half];
          float& s1 = tiles[0][j][2 * half + 1];
          if (live(group)) {
            s0 = fast_exp2(fmaf(s0, scale_log2, -mx_scaled));
            s1 = fast_exp2(fmaf(s1, scale_log2, -mx_scaled));
            sum[j % 4] += s0 + s1;
          } else {
            s0 = s1 = 0.f;
          }
        }
      }
      row_sum[half] = row_sum[half] * alpha[half] + ((sum[0] + sum[1]) + (sum[2] + sum[3]));
    }
    return __any_sync(0xffffffffu, rescale);
  }

  __device__ __forceinline__ static void rescale_o(float (&acc_o)[kOAcc], const float (&alpha)[2]) {
#pragma unroll
    for (int i = 0; i < kOAcc; ++i) acc_o[i] *= alpha[(i / 2) % 2];
  }

  // P of keys 16kk..16kk+15 as the A operand of P V: the m16n8k16 A layout per warp.
  __device__ __forceinline__ static void convert_p(const float (&acc_s)[kSAcc],
                                                   uint32_t (&p_frag)[kBlockN / 16][4]) {
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        p_frag[kk][r] = pack2<T>(acc_s[8 * kk + 2 * r], acc_s[8 * kk + 2 * r + 1]);
  }
};

}  // namespace sdpa::flash3
