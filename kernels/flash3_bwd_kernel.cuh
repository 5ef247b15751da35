// FlashAttention-3 design backward for sm_90a, warp-specialised. A CTA owns a block of 128 keys
// of one KV head (flash3_bwd_traits.cuh): warpgroup 0 is the producer, one thread of which loads
// K and V once and then, step by step, Q, dO, LSE and delta of 64 query rows into a ring of
// stages by TMA; each of the two consumer warpgroups owns 64 of the keys and, per step,
//   S^T = K Q^T and dP^T = V dO^T   (wgmma, both operands K-major in shared memory),
//   P^T = exp2(S^T scale log2(e) - LSE), dS^T = P^T (dP^T - delta)   (registers),
//   dV += P^T dO and dK += dS^T Q   (wgmma with P^T, dS^T from registers, dO and Q read MN-major),
//   dQ += dS K over the CTA's 128 keys   (both warpgroups' dS^T stored to shared memory and read
//     MN-major as A, K read MN-major as B; at D128 each warpgroup takes 64 columns, at D64 the
//     warpgroups take alternate steps; staged in shared memory and added into the fp32
//     accumulator by a bulk reduce-add that a second warp of the producer warpgroup issues).
// dK and dV sum the group's query heads in registers (no atomics) and are written once at the end,
// dK scaled, through shared memory and TMA stores; dQ's accumulator is scaled and converted by a
// last kernel (flash3_bwd.cu).
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "attention_shape.h"
#include "dispatch.cuh"
#include "flash3_bwd.h"
#include "flash3_bwd_traits.cuh"
#include "fused_launch.cuh"
#include "mma_sm80.cuh"
#include "mma_sm90.cuh"
#include "tma_map.h"

namespace sdpa::flash3 {

using namespace sm90;

// The producer thread: K and V of the block on their own barrier, then each step's Q, dO (one
// copy per 64-column block), LSE and delta rows into the next free stage.
template <typename Traits, bool kCausal>
__device__ __forceinline__ void run_bwd_producer(
    const Flash3BwdSmem<Traits>& smem, const Flash3BwdBlock<Traits, kCausal>& block,
    const CUtensorMap* map_q, const CUtensorMap* map_k, const CUtensorMap* map_v,
    const CUtensorMap* map_do, const CUtensorMap* map_lse, const CUtensorMap* map_delta) {
  using Smem = Flash3BwdSmem<Traits>;
  constexpr int kColBlocks = Traits::kColBlocks;
  mbarrier_arrive_expect_tx(smem.kv_full(), 2 * Traits::kKVBytes);
#pragma unroll
  for (int c = 0; c < kColBlocks; ++c) {
    tma_load_3d(smem.k + c * Traits::kKVColBytes, map_k, smem.kv_full(), c * 64, block.n0,
                block.bh_kv);
    tma_load_3d(smem.v + c * Traits::kKVColBytes, map_v, smem.kv_full(), c * 64, block.n0,
                block.bh_kv);
  }
  auto cursor = block.first_step();
  for (int i = 0; i < block.steps; ++i, block.advance(cursor)) {
    const int s = Smem::stage(i);
    const int m0 = cursor.m0();
    const int bh_q = cursor.bh_q;
    mbarrier_wait_idle(smem.empty(s), Smem::parity(i) ^ 1);
    mbarrier_arrive_expect_tx(smem.full(s), Traits::kStepBytes);
#pragma unroll
    for (int c = 0; c < kColBlocks; ++c) {
      tma_load_3d(smem.q_stage(s) + c * Traits::kQColBytes, map_q, smem.full(s), c * 64, m0, bh_q);
      tma_load_3d(smem.do_stage(s) + c * Traits::kQColBytes, map_do, smem.full(s), c * 64, m0,
                  bh_q);
    }
    tma_load_2d(smem.lse(s), map_lse, smem.full(s), m0, bh_q);
    tma_load_2d(smem.delta(s), map_delta, smem.full(s), m0, bh_q);
  }
}

// Named barriers of the dQ staging tiles: buffer b is full once its writers
// (Traits::kDqWriters) and the reducing warp met on kDqFullBarrier + b, and free again once they
// met on kDqEmptyBarrier + b. Id 1 is the consumers' dS^T barrier.
constexpr int kDqFullBarrier = 2;
constexpr int kDqEmptyBarrier = 4;
// Each consumer warpgroup's own, once its dK and dV are staged for their TMA stores.
constexpr int kKeyGradBarrier = 6;

// A warp of the producer warpgroup: per step, once the step's writers filled the staging tile,
// its first lane adds the tile into the step's tile of the fp32 accumulator (Flash3DqTile), waits
// until the tile has been read, and the warp hands it back to the writers of step i + kDqBuffers.
template <typename Traits, bool kCausal>
__device__ __forceinline__ void run_bwd_dq_reducer(const Flash3BwdSmem<Traits>& smem,
                                                   const Flash3BwdBlock<Traits, kCausal>& block,
                                                   float* dq_accum, int lane) {
  constexpr int kBuffers = Traits::kDqBuffers;
  auto cursor = block.first_step();
  for (int i = 0; i < block.steps; ++i, block.advance(cursor)) {
    const int buffer = i % kBuffers;
    named_barrier_sync(kDqFullBarrier + buffer, Traits::kDqBarrierThreads);
    if (lane == 0) {
      bulk_reduce_add_f32(dq_accum + block.dq_tile(cursor), smem.dq_tile(buffer),
                          Traits::kDqTileBytes);
      tma_store_commit();
      tma_store_wait_read();
    }
    __syncwarp();
    // Only a tile that a later step rewrites is handed back: no arrival is left pending at exit.
    if (i + kBuffers < block.steps)
      named_barrier_arrive(kDqEmptyBarrier + buffer, Traits::kDqBarrierThreads);
  }
  if (lane == 0) tma_store_wait_all();
}

// One consumer warpgroup: its 64 keys, their dK and dV, the GEMMs and the elementwise steps.
// Accumulator 4j + e of an m64nN tile is column 8j + 2t + e%2 of row 16 warp + g + (e/2)*8.
template <typename Traits, typename T, bool kCausal>
struct Flash3BwdConsumer {
  static constexpr int D = Traits::kHeadDim;
  static constexpr int kBlockM = Traits::kBlockM;
  static constexpr int kSAcc = kBlockM / 2;  // S^T, dP^T and a dQ chunk: m64n64
  static constexpr int kDAcc = D / 2;        // dK, dV: m64nD
  static constexpr int kQSteps = kBlockM / 16;
  static constexpr int kWGKeySteps = Traits::kWGKeys / 16;  // k16 steps over one warpgroup's keys
  static constexpr int kDsBarrier = 1;   // both consumer warpgroups, once their dS^T is stored
  static constexpr int kRowBytes = 128;  // a row of a 64-column block
  static constexpr int kK16Bytes = 16 * kRowBytes;  // 16 rows: a k16 step of an MN-major operand

  const Flash3BwdSmem<Traits>& smem;
  int n0;    // the CTA's first key
  int cw;    // the consumer warpgroup
  int warp;  // the warp within it
  int g;     // accumulator row within the warp's 16 (and g + 8)
  int t;     // accumulator column pair
  int key0;  // the warpgroup's first key
  int seq_kv;
  float scale_log2;

  __device__ __forceinline__ uint32_t k_rows() const {
    return smem.k + cw * Traits::kWGKeys * kRowBytes;
  }
  __device__ __forceinline__ uint32_t v_rows() const {
    return smem.v + cw * Traits::kWGKeys * kRowBytes;
  }

  // acc = X Y^T over D: X the warpgroup's 64 rows of K or V (A), Y the step's 64 rows of Q or dO
  // (B), both K-major; a k16 step is +32 bytes inside a swizzle atom, 4 of them a column block.
  __device__ __forceinline__ static void issue_scores(float (&acc)[kSAcc], uint32_t x, uint32_t y) {
    const uint64_t x_desc = smem_descriptor(x, 16, 1024);
    const uint64_t y_desc = smem_descriptor(y, 16, 1024);
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks)
      wgmma_ss_n64<T, 0, 0>(
          acc, descriptor_at(x_desc, (ks / 4) * Traits::kKVColBytes + (ks % 4) * 32),
          descriptor_at(y_desc, (ks / 4) * Traits::kQColBytes + (ks % 4) * 32), ks > 0 ? 1 : 0);
    wgmma_commit();
  }

  // acc += A Z over the step's queries: A (P^T or dS^T, keys x queries) from registers, Z (dO or
  // Q, queries x D) read MN-major as the forward reads V.
  __device__ __forceinline__ static void issue_key_grads(float (&acc)[kDAcc],
                                                         const uint32_t (&a)[kQSteps][4],
                                                         uint32_t z) {
    const uint64_t z_desc = smem_descriptor(z, Traits::kQColBytes, 1024);
#pragma unroll
    for (int kq = 0; kq < kQSteps; ++kq)
      wgmma_rs<T, D>(acc, a[kq], descriptor_at(z_desc, kq * kK16Bytes), 1);
  }

  // Keys past the end and (causal) keys after the query get P = 0; rows past seq_q have
  // LSE = +inf from the row pass, so their P is 0 too.
  __device__ __forceinline__ void probabilities(float (&acc)[kSAcc], int s, int m0) const {
    const bool needs_mask =
        key0 + Traits::kWGKeys > seq_kv || (kCausal && key0 + Traits::kWGKeys - 1 > m0);
    const int key = key0 + warp * 16 + g;
#pragma unroll
    for (int j = 0; j < kSAcc / 4; ++j) {
      const float2 lse = load_shared_f32x2(smem.lse(s) + (8 * j + 2 * t) * 4);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float& x = acc[4 * j + e];
        x = sm80::fast_exp2(fmaf(x, scale_log2, -(e % 2 == 0 ? lse.x : lse.y)));
        if (needs_mask) {
          const int n = key + (e / 2) * 8;
          const int m = m0 + 8 * j + 2 * t + e % 2;
          if (n >= seq_kv || (kCausal && n > m)) x = 0.f;
        }
      }
    }
  }

  // dS^T = P^T (dP^T - delta), into dp.
  __device__ __forceinline__ void score_grads(const float (&p)[kSAcc], float (&dp)[kSAcc],
                                              int s) const {
#pragma unroll
    for (int j = 0; j < kSAcc / 4; ++j) {
      const float2 delta = load_shared_f32x2(smem.delta(s) + (8 * j + 2 * t) * 4);
#pragma unroll
      for (int e = 0; e < 4; ++e)
        dp[4 * j + e] = p[4 * j + e] * (dp[4 * j + e] - (e % 2 == 0 ? delta.x : delta.y));
    }
  }

  // Queries 16kq..16kq+15 of a keys x queries tile as an A operand (the m16n8k16 A layout of
  // each warp's 16 keys), as the forward packs P.
  __device__ __forceinline__ static void pack(const float (&acc)[kSAcc],
                                              uint32_t (&a)[kQSteps][4]) {
#pragma unroll
    for (int kq = 0; kq < kQSteps; ++kq)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        a[kq][r] = sm80::pack2<T>(acc[8 * kq + 2 * r], acc[8 * kq + 2 * r + 1]);
  }

  // dS^T into the warpgroup's tile of a buffer: row = key (128 bytes of 64 queries), 16-byte
  // chunks swizzled by the row's index mod 8, which is g. a[kq][r] holds key 16 warp + g + 8(r%2),
  // queries 16kq + 8(r/2) + 2t and + 1.
  __device__ __forceinline__ void store_ds(const uint32_t (&a)[kQSteps][4], int buffer) const {
    const uint32_t tile = smem.ds_buffer(buffer) + cw * Traits::kDsBytes;
#pragma unroll
    for (int kq = 0; kq < kQSteps; ++kq)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int row = warp * 16 + g + 8 * (r % 2);
        const int chunk = 2 * kq + r / 2;
        store_shared_u32(tile + swizzled_pair_offset(chunk, row, g, t, 0), a[kq][r]);
      }
  }

  // A 64-column chunk of dQ = dS K over the CTA's first kWGs x 64 keys: A = dS (queries x keys)
  // read MN-major from a buffer's dS^T tiles, B = K (keys x D) read MN-major as the forward
  // reads V.
  template <int kWGs>
  __device__ __forceinline__ void issue_dq(float (&acc)[kSAcc], int chunk, int buffer) const {
    const uint64_t ds_desc = smem_descriptor(smem.ds_buffer(buffer), Traits::kDsBytes, 1024);
    const uint64_t k_desc =
        smem_descriptor(smem.k + chunk * Traits::kKVColBytes, Traits::kKVColBytes, 1024);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kWGs * kWGKeySteps; ++kk)
      wgmma_ss_n64<T, 1, 1>(acc, descriptor_at(ds_desc, kk * kK16Bytes),
                            descriptor_at(k_desc, kk * kK16Bytes), kk > 0 ? 1 : 0);
    wgmma_commit();
  }

  // The chunk into staging tile `buffer`, in the order the accumulator keeps (Flash3DqTile). The
  // tile is written again kDqBuffers steps on, once the reducing warp has read it.
  __device__ __forceinline__ void stage_dq(const float (&acc)[kSAcc], int chunk, int i,
                                           int buffer) const {
    if (i >= Traits::kDqBuffers)
      named_barrier_sync(kDqEmptyBarrier + buffer, Traits::kDqBarrierThreads);
    const int tw = warp * 32 + g * 4 + t;
#pragma unroll
    for (int j = 0; j < kSAcc / 4; ++j)
      store_shared_f32x4(smem.dq_tile(buffer) + Flash3DqTile<D>::piece_bytes(chunk, j, tw),
                         acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]);
    fence_async_shared();
    named_barrier_arrive(kDqFullBarrier + buffer, Traits::kDqBarrierThreads);
  }

  // dK's GEMM after dQ's, so that staging dQ overlaps it (wgmma.wait_group 1), or with dV's. On the
  // H100 (docs/kernel-notes.md) after was 6% faster at D128 causal, 4% non-causal, 2% at D64
  // causal, and 4.5% slower at D64 non-causal, where a warpgroup stages dQ every other step.
  static constexpr bool kDkAfterDq = Traits::kDqChunks == Traits::kConsumerWGs || kCausal;

  // Step i (stage s): the warpgroup's part unless (causal) all its keys come after the step's
  // queries; then, once both warpgroups stored dS^T, its share of dQ. dS^T has two buffers by
  // step parity: a tile is rewritten two steps on, after the barrier of the step between, which
  // every warpgroup passes only once its dQ GEMMs on the tile (their only readers) completed.
  __device__ __forceinline__ void step(int i, int s, int m0, float (&acc_dk)[kDAcc],
                                       float (&acc_dv)[kDAcc]) const {
    const int buffer = i % 2;
    const bool live = !kCausal || key0 <= m0 + kBlockM - 1;
    // The second warpgroup's keys: dS on them is zero when none of the step's queries sees them.
    const bool upper_live = !kCausal || n0 + Traits::kWGKeys <= m0 + kBlockM - 1;
    uint32_t p_frag[kQSteps][4];
    uint32_t ds_frag[kQSteps][4];
    if (live) {
      float acc_s[kSAcc];
      float acc_dp[kSAcc];
      issue_scores(acc_s, k_rows(), smem.q_stage(s));
      issue_scores(acc_dp, v_rows(), smem.do_stage(s));
      wgmma_wait<1>();
      fence_registers(acc_s);
      probabilities(acc_s, s, m0);
      wgmma_wait<0>();
      fence_registers(acc_dp);
      score_grads(acc_s, acc_dp, s);
      pack(acc_s, p_frag);
      pack(acc_dp, ds_frag);
      fence_registers(acc_dv);
      if constexpr (!kDkAfterDq) fence_registers(acc_dk);
      wgmma_fence();
      issue_key_grads(acc_dv, p_frag, smem.do_stage(s));
      if constexpr (!kDkAfterDq) issue_key_grads(acc_dk, ds_frag, smem.q_stage(s));
      wgmma_commit();
      store_ds(ds_frag, buffer);
      fence_async_shared();
    }
    named_barrier_sync(kDsBarrier, Traits::kConsumerWGs * 128);
    const bool mine = Traits::kDqChunks == Traits::kConsumerWGs || i % Traits::kConsumerWGs == cw;
    const int chunk = Traits::kDqChunks == Traits::kConsumerWGs ? cw : 0;
    float acc_dq[kSAcc];
    if (mine) {
      if (upper_live)
        issue_dq<Traits::kConsumerWGs>(acc_dq, chunk, buffer);
      else
        issue_dq<1>(acc_dq, chunk, buffer);
    }
    if constexpr (kDkAfterDq) {
      if (live) {
        fence_registers(acc_dk);
        wgmma_fence();
        issue_key_grads(acc_dk, ds_frag, smem.q_stage(s));
        wgmma_commit();
        wgmma_wait<1>();  // dV and dQ; dK runs on while dQ is staged
      } else {
        wgmma_wait<0>();
      }
      if (mine) {
        fence_registers(acc_dq);
        stage_dq(acc_dq, chunk, i, i % Traits::kDqBuffers);
      }
    }
    wgmma_wait<0>();  // dV and dK: they are done with dO and Q, and the stage goes back
    if (live) {
      fence_registers(acc_dv);
      fence_registers(acc_dk);
      fence_registers(p_frag);
      fence_registers(ds_frag);
    }
    mbarrier_arrive(smem.empty(s));
    if constexpr (!kDkAfterDq) {
      if (mine) {
        fence_registers(acc_dq);
        stage_dq(acc_dq, chunk, i, i % Traits::kDqBuffers);
      }
    }
  }

  // dK (scaled: dS was not) and dV of the warpgroup's keys, staged as 16-bit values in the
  // swizzled layout of the dK and dV maps and written by one TMA store per column block: 4-byte
  // global stores from the fragments, 64 a thread at D128, held the SM at the end of every CTA.
  // The staging reuses the stages of Q and dO, which both warpgroups are done with once they
  // have met past their last step. Keys past seq_kv fall outside the maps and are not written.
  __device__ __forceinline__ void store_key_grads(const float (&acc_dk)[kDAcc],
                                                  const float (&acc_dv)[kDAcc], int tw, int bh_kv,
                                                  float scale, const CUtensorMap* map_dk,
                                                  const CUtensorMap* map_dv) const {
    const uint32_t dk_tile = smem.key_grads(0, cw);
    const uint32_t dv_tile = smem.key_grads(1, cw);
    named_barrier_sync(kDsBarrier, Traits::kConsumerWGs * 128);
#pragma unroll
    for (int j = 0; j < kDAcc / 4; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = warp * 16 + g + 8 * half;  // row % 8 == g
        const uint32_t offset = swizzled_pair_offset(j, row, g, t, Traits::kKeyGradColBytes);
        store_shared_u32(dk_tile + offset, sm80::pack2<T>(acc_dk[4 * j + 2 * half] * scale,
                                                          acc_dk[4 * j + 2 * half + 1] * scale));
        store_shared_u32(dv_tile + offset,
                         sm80::pack2<T>(acc_dv[4 * j + 2 * half], acc_dv[4 * j + 2 * half + 1]));
      }
    fence_async_shared();
    named_barrier_sync(kKeyGradBarrier + cw, 128);
    if (tw == 0 && key0 < seq_kv) {
#pragma unroll
      for (int c = 0; c < Traits::kColBlocks; ++c) {
        tma_store_3d(map_dk, dk_tile + c * Traits::kKeyGradColBytes, c * 64, key0, bh_kv);
        tma_store_3d(map_dv, dv_tile + c * Traits::kKeyGradColBytes, c * 64, key0, bh_kv);
      }
      tma_store_commit();
      tma_store_wait_read();  // the CTA's shared memory must outlive the stores' reads
    }
  }
};

template <typename Traits, typename T, bool kCausal>
__global__ void __launch_bounds__(Traits::kNThreads, 1) flash3_bwd_kernel(
    const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
    const __grid_constant__ CUtensorMap map_v, const __grid_constant__ CUtensorMap map_do,
    const __grid_constant__ CUtensorMap map_lse, const __grid_constant__ CUtensorMap map_delta,
    const __grid_constant__ CUtensorMap map_dk, const __grid_constant__ CUtensorMap map_dv,
    float* dq_accum, const AttentionShape p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Smem = Flash3BwdSmem<Traits>;
  using Consumer = Flash3BwdConsumer<Traits, T, kCausal>;
  extern __shared__ __align__(1024) unsigned char smem_bytes[];
  const Smem smem(shared_address(smem_bytes));
  const Flash3BwdBlock<Traits, kCausal> block(p);
  const int tid = static_cast<int>(threadIdx.x);
  const int wg = tid / 128;
  if (tid == 0) smem.init_barriers();
  __syncthreads();

  if (wg == 0) {
    lower_registers<Traits::kProducerRegs>();
    if (tid == 0)
      run_bwd_producer(smem, block, &map_q, &map_k, &map_v, &map_do, &map_lse, &map_delta);
    if (tid / 32 == 1) run_bwd_dq_reducer(smem, block, dq_accum, tid % 32);
    return;
  }

  raise_registers<Traits::kConsumerRegs>();
  const int cw = static_cast<int>(warp_uniform(static_cast<uint32_t>(wg))) - 1;
  const int tw = tid % 128;
  const int lane = tid % 32;
  const Consumer consumer{.smem = smem,
                          .n0 = block.n0,
                          .cw = cw,
                          .warp = tw / 32,
                          .g = lane / 4,
                          .t = lane % 4,
                          .key0 = block.n0 + cw * Traits::kWGKeys,
                          .seq_kv = static_cast<int>(p.seq_kv),
                          .scale_log2 = p.scale * 1.4426950408889634f};
  float acc_dk[Consumer::kDAcc];
  float acc_dv[Consumer::kDAcc];
#pragma unroll
  for (int j = 0; j < Consumer::kDAcc; ++j) acc_dk[j] = acc_dv[j] = 0.f;
  mbarrier_wait(smem.kv_full(), 0);
  auto cursor = block.first_step();
  for (int i = 0; i < block.steps; ++i, block.advance(cursor)) {
    const int s = Smem::stage(i);
    mbarrier_wait(smem.full(s), Smem::parity(i));
    consumer.step(i, s, cursor.m0(), acc_dk, acc_dv);
  }
  consumer.store_key_grads(acc_dk, acc_dv, tw, block.bh_kv, p.scale, &map_dk, &map_dv);
#else
  __trap();  // built for sm_90a only (kernels/CMakeLists.txt); the backend never launches it
             // elsewhere
#endif
}

// The main kernel for head dim kHeadDim on `b`'s dtype and causal flag: one CTA per block of
// kBlockN keys of each (batch, KV head).
template <int kHeadDim>
cudaError_t launch_flash3_backward_main(const FusedBackward& b, const BackwardRows& rows) {
  using Traits = typename Flash3BwdConfig<kHeadDim>::Traits;
  const AttentionShape& s = b.shape;
  const int64_t q_heads = s.batch * s.heads;
  const int64_t kv_heads = s.batch * s.kv_heads;
  const int64_t key_blocks = (s.seq_kv + Traits::kBlockN - 1) / Traits::kBlockN;
  if (q_heads > INT32_MAX || key_blocks > INT32_MAX || s.kv_heads > kMaxGridYZ ||
      s.batch > kMaxGridYZ)
    return cudaErrorInvalidValue;
  CUtensorMap map_q;
  CUtensorMap map_k;
  CUtensorMap map_v;
  CUtensorMap map_do;
  CUtensorMap map_lse;
  CUtensorMap map_delta;
  CUtensorMap map_dk;
  CUtensorMap map_dv;
  for (const cudaError_t e :
       {encode_head_major_map(map_q, b.q, b.dtype, q_heads, s.seq_q, kHeadDim, Traits::kBlockM),
        encode_head_major_map(map_do, b.d_out, b.dtype, q_heads, s.seq_q, kHeadDim,
                              Traits::kBlockM),
        encode_head_major_map(map_k, b.k, b.dtype, kv_heads, s.seq_kv, kHeadDim, Traits::kBlockN),
        encode_head_major_map(map_v, b.v, b.dtype, kv_heads, s.seq_kv, kHeadDim, Traits::kBlockN),
        encode_row_stats_map(map_lse, rows.lse, q_heads, rows.stat_rows, Traits::kBlockM),
        encode_row_stats_map(map_delta, rows.delta, q_heads, rows.stat_rows, Traits::kBlockM),
        encode_head_major_map(map_dk, b.dk, b.dtype, kv_heads, s.seq_kv, kHeadDim, Traits::kWGKeys),
        encode_head_major_map(map_dv, b.dv, b.dtype, kv_heads, s.seq_kv, kHeadDim,
                              Traits::kWGKeys)})
    if (e != cudaSuccess) return e;
  return dispatch_dtype(b.dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    auto* const causal = flash3_bwd_kernel<Traits, T, true>;
    auto* const full = flash3_bwd_kernel<Traits, T, false>;
    static const cudaError_t attr = allow_dynamic_smem(causal, full, Traits::kSmemBytes);
    if (attr != cudaSuccess) return attr;
    const dim3 grid(static_cast<unsigned>(key_blocks), static_cast<unsigned>(s.kv_heads),
                    static_cast<unsigned>(s.batch));
    (s.causal ? causal : full)<<<grid, Traits::kNThreads, Traits::kSmemBytes, b.stream>>>(
        map_q, map_k, map_v, map_do, map_lse, map_delta, map_dk, map_dv, rows.dq_accum, s);
    return cudaGetLastError();
  });
}

}  // namespace sdpa::flash3
