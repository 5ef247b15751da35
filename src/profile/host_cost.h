// Host (CPU) time of a backend's calls, apart from GPU time.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <functional>

namespace sdpa {

class HostStopwatch {
 public:
  double elapsed_us() const {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Mean host time of one forward in steady state: `calls` forwards back to back, each call timed
// on the host without synchronizing (what a training loop pays to launch), then one sync.
double host_us_per_call(const std::function<void(cudaStream_t)>& forward, cudaStream_t stream, int calls);

}  // namespace sdpa
