// Compile-time tile choices of the flash3 forward kernel (FlashAttention-3 design, sm_90a): one
// traits struct per configuration, and the configuration each head dim uses
// (docs/kernel-notes.md has the measurements behind them).
#pragma once

#include <cuda_runtime_api.h>

#include "dispatch.cuh"
#include "flash3_fwd.h"
#include "flash3_tile_queue.h"
#include "fused_forward.h"

namespace sdpa::flash3 {

// A CTA of one producer warpgroup (TMA) and kConsumerWGs consumer warpgroups, each owning 64
// query rows (one wgmma m64 tile); K and V stream through a ring of kStages shared-memory
// stages of kBlockN keys; kSchedule orders the consumers' work (flash3_fwd.h). Every tile is stored
// as D/64 column blocks of 128-byte rows with the 128-byte swizzle, the layout TMA writes and
// wgmma's descriptors read.
template <int kHeadDim_, int kConsumerWGs_, int kBlockN_, int kStages_, Flash3Schedule kSchedule_>
struct Flash3FwdTraits {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kConsumerWGs = kConsumerWGs_;
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kStages = kStages_;
  static constexpr Flash3Schedule kSchedule = kSchedule_;

  static constexpr int kWGRows = 64;
  static constexpr int kBlockM = kConsumerWGs * kWGRows;
  static constexpr int kNThreads = (kConsumerWGs + 1) * 128;
  static constexpr int kColBlocks = kHeadDim / 64;  // 64-column (128-byte) blocks of D

  // Registers per thread after setmaxnreg: the producer gives its share to the consumers.
  // 24 with two consumers: 24 + 2 x 240 regs per thread slot; 32 + 2 x 240 (the whole register
  // file) hung setmaxnreg.inc on the H200.
  static constexpr int kProducerRegs = kConsumerWGs == 2 ? 24 : 32;
  static constexpr int kConsumerRegs = kConsumerWGs == 2 ? 240 : 160;

  static constexpr int kQBytes = kBlockM * kHeadDim * 2;     // a Q tile, and O staged for its store
  static constexpr int kTileBytes = kBlockN * kHeadDim * 2;  // one K or V stage
  // Two Q slots: a persistent CTA loads the next tile's Q while it still works on this one.
  static constexpr int kQSlots = 2;
  // Full and empty for each Q slot, and 4 a stage.
  static constexpr int kBarrierBytes = 8 * (2 * kQSlots + 4 * kStages);
  // 1024 bytes of slack: the swizzle atoms must start 1024-aligned.
  static constexpr int kSmemBytes =
      1024 + (kQSlots + 1) * kQBytes + 2 * kStages * kTileBytes + kBarrierBytes;

  static_assert(kHeadDim == 64 || kHeadDim == 128, "wgmma_rs is written for N = 64 and 128");
  static_assert(kBlockN == 128, "S = Q K^T is one m64n128 wgmma per k16 step");
  static_assert(kBlockM <= 256 && kBlockN <= 256, "a TMA box has at most 256 rows");
  static_assert(kProducerRegs * 128 + kConsumerRegs * 128 * kConsumerWGs <= 65536,
                "the register file holds one CTA");
  static_assert(kSmemBytes <= 227 * 1024, "over the per-block shared-memory limit");
};

// The head dims the kernel is compiled for, one translation unit each (flash3_fwd_hdim*.cu).
using Flash3HeadDims = IntList<64, 128>;

// K and V stages are handed back apart (K once S = Q K^T is done, V once P V is), so two stages
// keep a load in flight at D128, where O's own staging tile leaves room for no more; D64 has room
// for four. At D64 the GEMMs are short against the softmax, so three consumer warpgroups
// (192 rows) share the tensor cores, except under ping-pong, which takes turns between two.
template <int kHeadDim, Flash3Schedule kSchedule>
struct Flash3FwdConfig;
template <Flash3Schedule kSchedule>
struct Flash3FwdConfig<64, kSchedule> {
  using Traits =
      Flash3FwdTraits<64, kSchedule == Flash3Schedule::pingpong ? 2 : 3, 128, 4, kSchedule>;
};
template <Flash3Schedule kSchedule>
struct Flash3FwdConfig<128, kSchedule> {
  using Traits = Flash3FwdTraits<128, 2, 128, 2, kSchedule>;
};

// The schedule flash3 runs without a variant: the fastest measured at both head dims
// (docs/kernel-notes.md).
struct Flash3Default {
  static constexpr Flash3Schedule kSchedule = Flash3Schedule::overlap;
  static constexpr bool kPersistent = true;
};

// Defined in flash3_fwd_kernel.cuh, instantiated by one translation unit per head dimension.
template <int kHeadDim, Flash3Schedule kSchedule, bool kPersistent>
cudaError_t launch_flash3_forward_hdim(const FusedForward& f);

}  // namespace sdpa::flash3
