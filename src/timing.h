// GPU time of one forward: CUDA events around each sample, after a warm-up.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "result.h"

namespace sdpa {

TimingStats time_forward(const std::function<void(cudaStream_t)>& forward, cudaStream_t stream,
                         int warmup, int samples);

// Median, min and max of samples in milliseconds (samples must not be empty).
TimingStats summarize_samples(std::vector<double> samples_ms, int warmup);

}  // namespace sdpa
