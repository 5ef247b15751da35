#include "flash3_decode.h"

#include <algorithm>

#include "flash3_tile_queue.h"
#include "flash3_traits.cuh"

namespace sdpa::flash3 {
namespace {

int sm_count() {
  int device = 0;
  int sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return kMaxPersistentCtas;  // no device to ask
  }
  return sms;
}

}  // namespace

DecodePlan plan_decode_here(const AttentionShape& shape, int64_t page_size) {
  return plan_decode(shape, sm_count(), page_size);
}

std::size_t decode_workspace_bytes_here(const AttentionShape& shape) {
  // The workspace is sized before the K/V layout is known: room for the splits of a cache read a
  // block at a time and of one read a row at a time (any page smaller than a block).
  return std::max(decode_workspace_bytes(plan_decode_here(shape, 0), shape.head_dim),
                  decode_workspace_bytes(plan_decode_here(shape, 1), shape.head_dim));
}

cudaError_t launch_flash3_decode(const FusedForward& f) {
  const DecodePlan plan =
      plan_decode_here(f.shape, f.paged != nullptr ? f.paged->layout.page_size : 0);
  return dispatch_int(Flash3HeadDims{}, f.shape.head_dim, cudaErrorInvalidValue, [&](auto d) {
    return launch_flash3_decode_hdim<decltype(d)::value>(f, plan);
  });
}

}  // namespace sdpa::flash3
