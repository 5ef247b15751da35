#include "measure/ceilings.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "atomic_file.h"
#include "check.h"
#include "cublas_handle.h"
#include "device_buffer.h"
#include "random_fill.h"
#include "time_text.h"

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
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
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

}  // namespace

Ceilings measure_ceilings(const DeviceInfo& device) {
  CudaStream stream;
  Ceilings c;
  c.device_name = device.name;
  c.device_uuid = device.uuid;
  c.bf16_gemm_tflops = gemm_tflops(DType::bf16, stream.get());
  c.fp16_gemm_tflops = gemm_tflops(DType::fp16, stream.get());
  c.copy_tb_per_s = copy_tb_per_s(stream.get());
  c.method = fmt::format(
      "cuBLAS GEMM {0}x{0}x{0} on random data and a {1} GiB device-to-device copy (bytes read + "
      "written); median of {2} after {3} warm-ups",
      kGemmSize, kCopyBytes >> 30, kSamples, kWarmup);
  c.measured_at = utc_now_iso8601();
  return c;
}

std::string ceilings_cache_path(const DeviceInfo& device) {
  std::filesystem::path dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    dir = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    dir = std::filesystem::path(home) / ".cache";
  } else {
    dir = std::filesystem::temp_directory_path();
  }
  return (dir / "sdpa-prof" / fmt::format("ceilings-{}.json", device.uuid)).string();
}

std::optional<Ceilings> load_cached_ceilings(const DeviceInfo& device) {
  std::ifstream in(ceilings_cache_path(device));
  if (!in) return std::nullopt;
  try {
    Ceilings c = ceilings_from_json(nlohmann::json::parse(in));
    if (c.device_uuid != device.uuid) return std::nullopt;
    return c;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // a damaged cache is measured again
  }
}

void save_ceilings(const DeviceInfo& device, const Ceilings& c) {
  const std::string path = ceilings_cache_path(device);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  write_file_atomically(path, ceilings_to_json(c).dump(2) + "\n");
}

nlohmann::json ceilings_to_json(const Ceilings& c) {
  return nlohmann::json{{"device_name", c.device_name},       {"device_uuid", c.device_uuid},
                        {"bf16_gemm_tflops", c.bf16_gemm_tflops}, {"fp16_gemm_tflops", c.fp16_gemm_tflops},
                        {"copy_tb_per_s", c.copy_tb_per_s},    {"method", c.method},
                        {"measured_at", c.measured_at}};
}

Ceilings ceilings_from_json(const nlohmann::json& j) {
  Ceilings c;
  c.device_name = j.at("device_name").get<std::string>();
  c.device_uuid = j.at("device_uuid").get<std::string>();
  c.bf16_gemm_tflops = j.at("bf16_gemm_tflops").get<double>();
  c.fp16_gemm_tflops = j.at("fp16_gemm_tflops").get<double>();
  c.copy_tb_per_s = j.at("copy_tb_per_s").get<double>();
  c.method = j.value("method", "");
  c.measured_at = j.value("measured_at", "");
  return c;
}

}  // namespace sdpa
