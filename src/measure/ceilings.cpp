#include "measure/ceilings.h"

#include <vector>

#include <fmt/format.h>

#include "gpu/cublas_check.h"
#include "gpu/cublas_handle.h"
#include "gpu/device_buffer.h"
#include "io/ceilings_file.h"
#include "io/time_text.h"
#include "measure/sample_stats.h"
#include "random_fill.h"
#include "read_bandwidth.h"

namespace sdpa {
namespace {

constexpr int kGemmSize = 8192;
constexpr std::size_t kCopyBytes = std::size_t{2} << 30;
constexpr int kWarmup = 3;
constexpr int kSamples = 10;

// Median milliseconds of `samples` timed runs of `work` after `kWarmup` untimed ones.
template <typename Work>
double median_ms(cudaStream_t stream, Work&& work) {
  CudaEvent start;
  CudaEvent stop;
  for (int i = 0; i < kWarmup; ++i) work();
  std::vector<float> ms(kSamples);
  for (float& m : ms) {
    SDPA_CHECK_CUDA(cudaEventRecord(start.get(), stream));
    work();
    SDPA_CHECK_CUDA(cudaEventRecord(stop.get(), stream));
    SDPA_CHECK_CUDA(cudaEventSynchronize(stop.get()));
    SDPA_CHECK_CUDA(cudaEventElapsedTime(&m, start.get(), stop.get()));
  }
  return summarize(std::vector<double>(ms.begin(), ms.end())).median;
}

// C = A * B on square matrices of random data (zeros run faster than real data would).
double gemm_tflops(DType t, cudaStream_t stream) {
  const std::size_t elems = std::size_t{kGemmSize} * kGemmSize;
  DeviceBuffer a(elems * 2);
  DeviceBuffer b(elems * 2);
  DeviceBuffer c(elems * 2);
  SDPA_CHECK_CUDA(launch_fill_normal(t, a.get(), static_cast<int64_t>(elems), 1, 0, stream));
  SDPA_CHECK_CUDA(launch_fill_normal(t, b.get(), static_cast<int64_t>(elems), 1, 1, stream));
  CublasHandle handle;
  SDPA_CHECK_CUBLAS(cublasSetStream(handle.get(), stream));
  const cudaDataType_t type = t == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
  const float alpha = 1.f;
  const float beta = 0.f;
  const double ms = median_ms(stream, [&] {
    SDPA_CHECK_CUBLAS(cublasGemmEx(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, kGemmSize, kGemmSize, kGemmSize,
                                   &alpha, a.get(), type, kGemmSize, b.get(), type, kGemmSize, &beta,
                                   c.get(), type, kGemmSize, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  });
  return 2.0 * kGemmSize * kGemmSize * static_cast<double>(kGemmSize) / (ms * 1e-3) / 1e12;
}

double copy_tb_per_s(cudaStream_t stream) {
  DeviceBuffer src(kCopyBytes);
  DeviceBuffer dst(kCopyBytes);
  SDPA_CHECK_CUDA(cudaMemsetAsync(src.get(), 1, kCopyBytes, stream));
  const double ms = median_ms(stream, [&] {
    SDPA_CHECK_CUDA(cudaMemcpyAsync(dst.get(), src.get(), kCopyBytes, cudaMemcpyDeviceToDevice, stream));
  });
  return 2.0 * static_cast<double>(kCopyBytes) / (ms * 1e-3) / 1e12;
}

// The read kernel's configurations tried: loads in flight per thread, blocks of 512 threads an SM.
// The ceiling is the best of them: which one a GPU's memory system favours is measured, not assumed.
struct ReadConfig {
  int loads_in_flight;
  int blocks_per_sm;
};
constexpr ReadConfig kReadConfigs[] = {{4, 4}, {8, 4}, {4, 2}, {8, 2}};

// Bytes read per second by a kernel that reads kCopyBytes once (a copy's buffer: far past the L2),
// the best of kReadConfigs.
double read_tb_per_s(const DeviceInfo& device, cudaStream_t stream) {
  DeviceBuffer src(kCopyBytes);
  const int most_blocks = device.sm_count * 4;  // every sm_80+ SM holds 2048 threads: 4 blocks
  DeviceBuffer sink(static_cast<std::size_t>(most_blocks) * sizeof(uint32_t));
  SDPA_CHECK_CUDA(cudaMemsetAsync(src.get(), 1, kCopyBytes, stream));
  double best_ms = 0;
  for (const ReadConfig& r : kReadConfigs) {
    const int blocks = device.sm_count * r.blocks_per_sm;
    const double ms = median_ms(stream, [&] {
      SDPA_CHECK_CUDA(
          launch_read_bandwidth(src.get(), kCopyBytes, sink.as<uint32_t>(), blocks, r.loads_in_flight, stream));
    });
    if (best_ms == 0 || ms < best_ms) best_ms = ms;
  }
  return static_cast<double>(kCopyBytes) / (best_ms * 1e-3) / 1e12;
}

}  // namespace

std::string ceilings_method() {
  return fmt::format(
      "cuBLAS GEMM {0}x{0}x{0} on random data, a {1} GiB device-to-device copy (bytes read + "
      "written) and a kernel reading {1} GiB once (16-byte streaming loads, 4 or 8 in flight a "
      "thread, 2 or 4 blocks of 512 threads an SM: the best of the four); median of {2} after {3} "
      "warm-ups",
      kGemmSize, kCopyBytes >> 30, kSamples, kWarmup);
}

Ceilings measure_ceilings(const DeviceInfo& device) {
  CudaStream stream;
  Ceilings c;
  c.device_name = device.name;
  c.device_uuid = device.uuid;
  c.bf16_gemm_tflops = gemm_tflops(DType::bf16, stream.get());
  c.fp16_gemm_tflops = gemm_tflops(DType::fp16, stream.get());
  c.copy_tb_per_s = copy_tb_per_s(stream.get());
  c.read_tb_per_s = read_tb_per_s(device, stream.get());
  c.method = ceilings_method();
  c.measured_at = utc_now_iso8601();
  return c;
}

Ceilings measure_and_cache_ceilings(const DeviceInfo& device, const std::string& attached_tool,
                                    std::ostream& progress) {
  if (!attached_tool.empty()) {
    progress << fmt::format(
        "measuring this GPU's ceilings for this run alone, not cached: {} is attached, "
        "and the times kernels take under it are not the GPU's\n",
        attached_tool);
    return measure_ceilings(device);
  }
  progress << "measuring this GPU's ceilings once (cached in " << ceilings_cache_path(device)
           << ")\n";
  Ceilings measured = measure_ceilings(device);
  if (const std::string why = save_ceilings(device, measured); !why.empty())
    progress << "sdpa-prof: warning: " << why << "\n";
  return measured;
}

}  // namespace sdpa
