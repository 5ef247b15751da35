#include <algorithm>

#include "flash3_bwd.h"
#include "flash3_decode.h"
#include "flash3_fwd.h"
#include "flash3_tail_plan.h"
#include "flash3_traits.cuh"
#include "fused_launch.cuh"

namespace sdpa {
namespace {

using flash3::Flash3FwdConfig;

// The shared memory the limits state for a head dim: the most any schedule, or the decode kernel,
// asks for.
constexpr auto kHeadDims = fused_head_dim_table(flash3::Flash3HeadDims{}, [](auto d) {
  constexpr int D = decltype(d)::value;
  return std::max({Flash3FwdConfig<D, Flash3Schedule::serial>::Traits::kSmemBytes,
                   Flash3FwdConfig<D, Flash3Schedule::overlap>::Traits::kSmemBytes,
                   Flash3FwdConfig<D, Flash3Schedule::pingpong>::Traits::kSmemBytes,
                   flash3::DecodeTraits<D, flash3::decode_slots(D, 16).deep>::kSmemBytes,
                   flash3::DecodeTraits<D, flash3::decode_slots(D, 32).deep>::kSmemBytes});
});

// The prefill kernel's schedules alone (the variants) read no pages.
constexpr FusedKernelLimits kPrefillLimits{
    .head_dims = kHeadDims,
    .head_dim_rule = "its wgmma shapes and 128-byte swizzled tiles are written for 64 and 128",
    .min_arch = 90,
    .arch_needs = "wgmma, setmaxnreg and TMA, built for sm_90a",
    .max_grid_yz = kMaxGridYZ,
    .exact_arch = true};

// The backend's kernel: the decode kernel for short queries, which reads pages too, else the
// prefill kernel.
constexpr FusedKernelLimits kLimits = [] {
  FusedKernelLimits l = kPrefillLimits;
  l.reads_paged_kv = true;
  l.paged_max_seq_q = flash3::kDecodeMaxSeqQ;
  l.paged_key_block = flash3::kDecodeBlockN;
  return l;
}();

template <Flash3Schedule kSchedule, bool kPersistent>
cudaError_t launch_schedule(const FusedForward& f) {
  return launch_within_limits(flash3::Flash3HeadDims{}, kPrefillLimits, f, [&](auto d) {
    return flash3::launch_flash3_forward_hdim<decltype(d)::value, kSchedule, kPersistent>(f);
  });
}

cudaError_t launch_default(const FusedForward& f) {
  return launch_within_limits(flash3::Flash3HeadDims{}, kLimits, f, [&](auto d) {
    // The decode kernel keeps no row statistics: a forward that a backward follows runs prefill.
    if (f.lse == nullptr && flash3::uses_decode_kernel(f.shape)) return flash3::launch_flash3_decode(f);
    using Default = flash3::Flash3Default;
    return flash3::launch_flash3_forward_hdim<decltype(d)::value, Default::kSchedule,
                                              Default::kPersistent>(f);
  });
}

cudaError_t launch_decode(const FusedForward& f) {
  if (!flash3::uses_decode_kernel(f.shape)) return cudaErrorInvalidValue;
  return launch_within_limits(flash3::Flash3HeadDims{}, kLimits, f,
                              [&](auto) { return flash3::launch_flash3_decode(f); });
}

// The most any schedule needs: a persistent grid's tile queue (flash3_tile_queue.h), then the
// parts of the tiles of its last round, split when not causal (flash3_tail_split.cuh).
std::size_t prefill_workspace_bytes(const AttentionShape& s) {
  int device = 0;
  int sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    (void)cudaGetLastError();
    sms = flash3::kMaxPersistentCtas;  // no device to ask: the most any could need
  }
  const int64_t max_grid = std::min(sms, flash3::kMaxPersistentCtas);
  return dispatch_int(flash3::Flash3HeadDims{}, s.head_dim, std::size_t{0}, [&](auto d) {
    constexpr int D = decltype(d)::value;
    const auto need = [&](auto config) {
      using Traits = typename decltype(config)::Traits;
      return flash3::tail_split_bytes(s, Traits::kBlockM, Traits::kBlockN, max_grid);
    };
    return flash3::kTileQueueBytes +
           std::max({need(Flash3FwdConfig<D, Flash3Schedule::serial>{}),
                     need(Flash3FwdConfig<D, Flash3Schedule::overlap>{}),
                     need(Flash3FwdConfig<D, Flash3Schedule::pingpong>{})});
  });
}

// A short-query forward that a backward follows runs prefill (launch_default): room for either.
std::size_t workspace_bytes(const AttentionShape& s) {
  return flash3::uses_decode_kernel(s)
             ? std::max(flash3::decode_workspace_bytes_here(s), prefill_workspace_bytes(s))
             : prefill_workspace_bytes(s);
}

// Every schedule writes the rows' LSE when a backward follows; the backward is the same for all.
template <Flash3Schedule kSchedule, bool kPersistent>
constexpr FusedForwardKernel kScheduled{kPrefillLimits, launch_schedule<kSchedule, kPersistent>,
                                        prefill_workspace_bytes, launch_flash3_backward};

template <bool kPersistent>
const FusedForwardKernel& scheduled(Flash3Schedule schedule) {
  switch (schedule) {
    case Flash3Schedule::serial:
      return kScheduled<Flash3Schedule::serial, kPersistent>;
    case Flash3Schedule::overlap:
      return kScheduled<Flash3Schedule::overlap, kPersistent>;
    case Flash3Schedule::pingpong:
      break;
  }
  return kScheduled<Flash3Schedule::pingpong, kPersistent>;
}

}  // namespace

constexpr FusedForwardKernel kFlash3Forward{kLimits, launch_default, workspace_bytes,
                                            launch_flash3_backward};
constexpr FusedForwardKernel kFlash3Decode{kLimits, launch_decode, workspace_bytes};

const FusedForwardKernel& flash3_forward(Flash3Schedule schedule, bool persistent) {
  return persistent ? scheduled<true>(schedule) : scheduled<false>(schedule);
}

}  // namespace sdpa
