#include "flash_bwd.h"
#include "flash_fwd.h"
#include "flash_traits.cuh"
#include "fused_launch.cuh"

namespace sdpa {
namespace {

constexpr auto kHeadDims = fused_head_dim_table(flash::FlashHeadDims{}, [](auto d) {
  return flash::FlashFwdConfig<decltype(d)::value>::Traits::kSmemBytes;
});

cudaError_t launch_flash_forward(const FusedForward& f) {
  return launch_within_limits(flash::FlashHeadDims{}, kFlashForward.limits, f, [&](auto d) {
    return flash::launch_flash_forward_hdim<decltype(d)::value>(f);
  });
}

}  // namespace

constexpr FusedForwardKernel kFlashForward{sm80_query_block_limits(kHeadDims), launch_flash_forward,
                                           nullptr, launch_flash_backward,
                                           flash_backward_smem_bytes};

}  // namespace sdpa
