#include "profile/host_cost.h"

#include "gpu/check.h"

namespace sdpa {

double host_us_per_call(const std::function<void(cudaStream_t)>& forward, cudaStream_t stream, int calls) {
  SDPA_CHECK_CUDA(cudaStreamSynchronize(stream));
  double total_us = 0;
  for (int i = 0; i < calls; ++i) {
    const HostStopwatch call;
    forward(stream);
    total_us += call.elapsed_us();
  }
  SDPA_CHECK_CUDA(cudaStreamSynchronize(stream));
  return calls > 0 ? total_us / calls : 0;
}

}  // namespace sdpa
