#include "timing.h"

#include <algorithm>

#include "check.h"
#include "device_buffer.h"

namespace sdpa {

TimingStats summarize_samples(std::vector<double> ms, int warmup) {
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  TimingStats t;
  t.warmup = warmup;
  t.samples = static_cast<int>(n);
  t.min_ms = ms.front();
  t.max_ms = ms.back();
  t.median_ms = n % 2 == 1 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  return t;
}

TimingStats time_forward(const std::function<void(cudaStream_t)>& forward, cudaStream_t stream,
                         int warmup, int samples) {
  for (int i = 0; i < warmup; ++i) forward(stream);
  SDPA_CHECK_CUDA(cudaStreamSynchronize(stream));

  CudaEvent start;
  CudaEvent stop;
  std::vector<double> ms;
  ms.reserve(static_cast<std::size_t>(samples));
  for (int i = 0; i < samples; ++i) {
    SDPA_CHECK_CUDA(cudaEventRecord(start.get(), stream));
    forward(stream);
    SDPA_CHECK_CUDA(cudaEventRecord(stop.get(), stream));
    SDPA_CHECK_CUDA(cudaEventSynchronize(stop.get()));
    float elapsed = 0.f;
    SDPA_CHECK_CUDA(cudaEventElapsedTime(&elapsed, start.get(), stop.get()));
    ms.push_back(elapsed);
  }
  return summarize_samples(std::move(ms), warmup);
}

}  // namespace sdpa
