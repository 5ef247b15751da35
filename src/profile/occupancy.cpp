#include "profile/occupancy.h"

#include <cuda_occupancy.h>

#include <algorithm>
#include <array>
#include <climits>
#include <utility>

namespace sdpa {
namespace {

constexpr std::size_t kKiB = 1024;
constexpr int kWarpSize = 32;
constexpr std::size_t kDefaultSharedPerBlock = 48 * kKiB;  // without cudaFuncAttributeMaxDynamicSharedMemorySize
constexpr std::size_t kReservedSharedPerBlock = 1 * kKiB;  // the driver's per-block reserve, sm_80 on

// From the CUDA programming guide's table of compute capabilities.
constexpr std::array kArchTable{
    ArchLimits{8, 0, 2048, 164 * kKiB, 163 * kKiB},  // A100
    ArchLimits{8, 6, 1536, 100 * kKiB, 99 * kKiB},   // RTX 30xx, A40
    ArchLimits{8, 9, 1536, 100 * kKiB, 99 * kKiB},   // RTX 40xx, L4, L40
    ArchLimits{9, 0, 2048, 228 * kKiB, 227 * kKiB},  // H100, H200
    ArchLimits{10, 0, 2048, 228 * kKiB, 227 * kKiB},  // B200
};

cudaOccDeviceProp device_prop(const ArchLimits& arch, int sm_count) {
  cudaOccDeviceProp d;
  d.computeMajor = arch.cc_major;
  d.computeMinor = arch.cc_minor;
  d.maxThreadsPerBlock = 1024;
  d.maxThreadsPerMultiprocessor = arch.max_threads_per_sm;
  d.regsPerBlock = 65536;
  d.regsPerMultiprocessor = 65536;
  d.warpSize = kWarpSize;
  d.sharedMemPerBlock = kDefaultSharedPerBlock;
  d.sharedMemPerMultiprocessor = arch.shared_per_sm;
  d.numSms = sm_count;
  d.sharedMemPerBlockOptin = arch.shared_per_block_optin;
  d.reservedSharedMemPerBlock = kReservedSharedPerBlock;
  return d;
}

// The carveout as the percentage cuda_occupancy.h rounds back up to `shared_config` bytes.
int carveout_percent(std::size_t shared_config, const ArchLimits& arch) {
  if (shared_config == 0) return SHAREDMEM_CARVEOUT_DEFAULT;
  return static_cast<int>(std::min<std::size_t>(100, shared_config * 100 / arch.shared_per_sm));
}

}  // namespace

std::optional<ArchLimits> arch_limits(int cc_major, int cc_minor) {
  for (const ArchLimits& a : kArchTable)
    if (a.cc_major == cc_major && a.cc_minor == cc_minor) return a;
  return std::nullopt;
}

std::optional<OccupancyEstimate> estimate_occupancy(const LaunchResources& launch, const ArchLimits& arch,
                                                    int sm_count) {
  if (launch.threads_per_block <= 0 || sm_count <= 0) return std::nullopt;
  const cudaOccDeviceProp device = device_prop(arch, sm_count);

  // Theoretical, as Nsight Compute computes it: the kernel ran, so it had opted into what it uses.
  cudaOccFuncAttributes kernel;
  kernel.maxThreadsPerBlock = device.maxThreadsPerBlock;
  kernel.numRegs = launch.registers_per_thread;
  kernel.sharedSizeBytes = launch.static_shared;
  kernel.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  kernel.maxDynamicSharedSizeBytes = arch.shared_per_block_optin - std::min(launch.static_shared, arch.shared_per_block_optin);
  kernel.numBlockBarriers = 1;
  cudaOccDeviceState state;
  state.carveoutConfig = carveout_percent(launch.shared_config, arch);
  cudaOccResult r{};
  if (cudaOccMaxActiveBlocksPerMultiprocessor(&r, &device, &kernel, &state, launch.threads_per_block,
                                              launch.dynamic_shared) != CUDA_OCC_SUCCESS)
    return std::nullopt;

  OccupancyEstimate e;
  const int warps_per_block = (launch.threads_per_block + kWarpSize - 1) / kWarpSize;
  e.blocks_per_sm = r.activeBlocksPerMultiprocessor;
  e.theoretical = static_cast<double>(e.blocks_per_sm * warps_per_block) / (arch.max_threads_per_sm / kWarpSize);
  e.limiters = (r.limitingFactors & OCC_LIMIT_WARPS ? kLimitWarps : 0u) |
               (r.limitingFactors & OCC_LIMIT_REGISTERS ? kLimitRegisters : 0u) |
               (r.limitingFactors & OCC_LIMIT_SHARED_MEMORY ? kLimitSharedMemory : 0u) |
               (r.limitingFactors & OCC_LIMIT_BLOCKS ? kLimitBlocks : 0u) |
               (r.limitingFactors & OCC_LIMIT_BARRIERS ? kLimitBarriers : 0u);
  e.block_limit_registers = r.blockLimitRegs;
  e.block_limit_shared_memory = r.blockLimitSharedMem;
  e.block_limit_warps = r.blockLimitWarps;
  e.block_limit_blocks = r.blockLimitBlocks;

  // Kineto's kernelOccupancy(): a default-constructed attribute set, so no opt-in and no barriers.
  cudaOccFuncAttributes as_profiler;
  as_profiler.maxThreadsPerBlock = INT_MAX;
  as_profiler.numRegs = launch.registers_per_thread;
  as_profiler.sharedSizeBytes = launch.static_shared;
  const cudaOccDeviceState default_state;
  cudaOccResult p{};
  if (cudaOccMaxActiveBlocksPerMultiprocessor(&p, &device, &as_profiler, &default_state,
                                              launch.threads_per_block, launch.dynamic_shared) == CUDA_OCC_SUCCESS) {
    const double grid_per_sm = static_cast<double>(launch.grid_blocks) / sm_count;
    const double blocks = std::min(static_cast<double>(p.activeBlocksPerMultiprocessor), grid_per_sm);
    e.profiler_style = blocks * launch.threads_per_block / arch.max_threads_per_sm;
  }
  return e;
}

}  // namespace sdpa
