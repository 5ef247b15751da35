// Compile-time tile choices of the flash forward kernel: one traits struct per configuration,
// and the configuration each head dimension uses (chosen by measurement, docs/kernel-notes.md).
#pragma once

#include <cuda_runtime_api.h>

#include "dispatch.cuh"
#include "fused_forward.h"

namespace sdpa::flash {

// kBlockM query rows per CTA split over kNWarps warps (each warp owns kBlockM / kNWarps rows,
// a multiple of 16: one m16 MMA tile or more); K and V stream through shared memory in tiles
// of kBlockN keys, two stages each. kQInRegs keeps the warp's Q fragments in registers for the
// whole kernel instead of re-reading them from shared memory at every key block.
template <int kHeadDim_, int kBlockM_, int kBlockN_, int kNWarps_, bool kQInRegs_,
          int kMinBlocksPerSm_>
struct FlashFwdTraits {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockM = kBlockM_;
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kNWarps = kNWarps_;
  static constexpr bool kQInRegs = kQInRegs_;
  static constexpr int kMinBlocksPerSm = kMinBlocksPerSm_;

  static constexpr int kNThreads = kNWarps * 32;
  static constexpr int kWarpRows = kBlockM / kNWarps;
  static constexpr int kMTiles = kWarpRows / 16;      // m16 tiles per warp
  static constexpr int kKSteps = kHeadDim / 16;       // k16 steps of Q K^T
  static constexpr int kNTilesS = kBlockN / 8;        // n8 tiles of S per m16 tile
  static constexpr int kNTilesO = kHeadDim / 8;       // n8 tiles of O per m16 tile
  static constexpr int kChunksPerRow = kHeadDim / 8;  // 16-byte chunks per row of 16-bit values
  static constexpr int kRowBytes = kHeadDim * 2;
  static constexpr int kRowsPerPass = kNThreads / kChunksPerRow;  // rows one cp.async pass covers

  static constexpr int kQBytes = kBlockM * kRowBytes;
  static constexpr int kTileBytes = kBlockN * kRowBytes;       // one K or V stage
  static constexpr int kSmemBytes = kQBytes + 4 * kTileBytes;  // Q, 2 K stages, 2 V stages

  // The XOR swizzle permutes the low 3 bits of a row's 16-byte chunk index by (row % 8).
  static_assert(kHeadDim % 64 == 0, "swizzle needs at least 8 chunks of 16 bytes per row");
  static_assert(kWarpRows % 16 == 0 && kMTiles >= 1, "each warp owns whole m16 tiles");
  static_assert(kBlockN % 16 == 0, "key tiles are whole k16 steps of P V");
  static_assert(kRowsPerPass % 8 == 0, "a thread's swizzle phase must not change between passes");
  static_assert(kBlockN % kRowsPerPass == 0 && kBlockM % kRowsPerPass == 0,
                "tiles are whole cp.async passes");
  static_assert(kSmemBytes <= 227 * 1024, "over the per-block shared-memory limit");
};

// The head dims the kernel is compiled for: each has a configuration below and a translation
// unit of its own (flash_fwd_hdim*.cu).
using FlashHeadDims = IntList<64, 128>;

// The configuration used for each head dimension: FA2's 128-row, 4-warp CTA with two m16 tiles
// per warp measured fastest at both (docs/kernel-notes.md).
template <int kHeadDim>
struct FlashFwdConfig;
template <>
struct FlashFwdConfig<64> {
  using Traits = FlashFwdTraits<64, 128, 64, 4, true, 2>;
};
template <>
struct FlashFwdConfig<128> {
  using Traits = FlashFwdTraits<128, 128, 64, 4, false, 2>;
};

// Defined in flash_fwd_kernel.cuh, instantiated by one translation unit per head dimension.
template <int kHeadDim>
cudaError_t launch_flash_forward_hdim(const FusedForward& f);

}  // namespace sdpa::flash
