#include "flash3_fwd.h"
#include "flash3_traits.cuh"
#include "fused_launch.cuh"

namespace sdpa {
namespace {

constexpr auto kHeadDims = fused_head_dim_table(flash3::Flash3HeadDims{}, [](auto d) {
  return flash3::Flash3FwdConfig<decltype(d)::value, Flash3Schedule::pingpong>::Traits::kSmemBytes;
});

template <Flash3Schedule kSchedule>
cudaError_t launch_flash3_forward(const FusedForward& f) {
  return launch_within_limits(flash3::Flash3HeadDims{}, kFlash3Forward.limits, f, [&](auto d) {
    return flash3::launch_flash3_forward_hdim<decltype(d)::value, kSchedule>(f);
  });
}

constexpr FusedKernelLimits kLimits{
    .head_dims = kHeadDims,
    .head_dim_rule = "its wgmma shapes and 128-byte swizzled tiles are written for 64 and 128",
    .min_arch = 90,
    .arch_needs = "wgmma, setmaxnreg and TMA, built for sm_90a",
    .max_grid_yz = kMaxGridYZ,
    .exact_arch = true};

constexpr FusedForwardKernel kSerial{kLimits, launch_flash3_forward<Flash3Schedule::serial>};
constexpr FusedForwardKernel kOverlap{kLimits, launch_flash3_forward<Flash3Schedule::overlap>};

}  // namespace

constexpr FusedForwardKernel kFlash3Forward{kLimits,
                                            launch_flash3_forward<Flash3Schedule::pingpong>};

const FusedForwardKernel& flash3_forward(Flash3Schedule schedule) {
  switch (schedule) {
    case Flash3Schedule::serial:
      return kSerial;
    case Flash3Schedule::overlap:
      return kOverlap;
    case Flash3Schedule::pingpong:
      break;
  }
  return kFlash3Forward;
}

}  // namespace sdpa
