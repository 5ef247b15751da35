// Device tensors copied back to the host and compared there, for the GPU tests that check against
// the CPU.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "dtype.h"
#include "elementwise.h"
#include "gpu/check.h"
#include "gpu/device_buffer.h"

namespace sdpa {

// The first `n` elements of a 16-bit tensor of type `t`, as floats.
inline std::vector<float> to_host_floats(DType t, const DeviceBuffer& src, int64_t n, cudaStream_t s) {
  DeviceBuffer tmp(static_cast<std::size_t>(n) * sizeof(float));
  SDPA_CHECK_CUDA(launch_cast_to_float(t, src.get(), tmp.as<float>(), n, s));
  std::vector<float> host(static_cast<std::size_t>(n));
  SDPA_CHECK_CUDA(cudaMemcpyAsync(host.data(), tmp.get(), tmp.bytes(), cudaMemcpyDeviceToHost, s));
  SDPA_CHECK_CUDA(cudaStreamSynchronize(s));
  return host;
}

// An fp32 tensor, whole.
inline std::vector<float> to_host(const DeviceBuffer& src) {
  std::vector<float> host(src.bytes() / sizeof(float));
  SDPA_CHECK_CUDA(cudaMemcpy(host.data(), src.get(), src.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

// ||got - expected|| / ||expected||
// The RMS error over the larger of the expected RMS and `floor_rms` (a gradient that cancels to 0
// is judged against a sibling's scale; run/verify.h says why).
inline double relative_l2(const std::vector<float>& got, const std::vector<double>& expected, double floor_rms = 0) {
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    err += (got[i] - expected[i]) * (got[i] - expected[i]);
    norm += expected[i] * expected[i];
  }
  const double n = static_cast<double>(std::max<std::size_t>(got.size(), 1));
  return std::sqrt(err / n) / std::max(std::sqrt(norm / n), floor_rms);
}

inline double rms(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x * x;
  return std::sqrt(sum / static_cast<double>(std::max<std::size_t>(v.size(), 1)));
}

}  // namespace sdpa
