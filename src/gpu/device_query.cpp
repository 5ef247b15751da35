#include "gpu/device_query.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <dlfcn.h>

#include "gpu/cublas_check.h"

namespace sdpa {
namespace {

std::string format_uuid(const cudaUUID_t& uuid) {
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
  }
  return s;
}

// The cuDNN that would load at run time, found without linking it: 0 when there is none.
std::size_t loaded_cudnn_version() {
  void* lib = dlopen("libcudnn.so.9", RTLD_LAZY | RTLD_LOCAL);
  if (lib == nullptr) return 0;
  using GetVersion = std::size_t (*)();
  const auto get_version = reinterpret_cast<GetVersion>(dlsym(lib, "cudnnGetVersion"));
  const std::size_t version = get_version != nullptr ? get_version() : 0;
  dlclose(lib);
  return version;
}

}  // namespace

bool no_cuda_device_present() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) return true;
  dlclose(driver);
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  return err == cudaErrorNoDevice || (err == cudaSuccess && count == 0);
}

int visible_device_count(std::string& error) {
  int count = 0;
  if (const cudaError_t err = cudaGetDeviceCount(&count); err != cudaSuccess || count == 0) {
    error = no_cuda_device_present() ? fmt::format("{}: none is visible", kNoDevicePresent)
                                     : fmt::format("the CUDA driver failed: {}", cudaGetErrorString(err));
    return 0;
  }
  return count;
}

bool query_device(int ordinal, DeviceInfo& info, std::string& error) {
  int count = 0;
  if (const cudaError_t err = cudaGetDeviceCount(&count); err != cudaSuccess || count == 0) {
    if (no_cuda_device_present())
      error = fmt::format("{}: {}", kNoDevicePresent,
                          err == cudaErrorInsufficientDriver
                              ? "the NVIDIA driver (libcuda.so.1) is not installed"
                              : "none is visible (check CUDA_VISIBLE_DEVICES and nvidia-smi)");
    else
      error = fmt::format("the CUDA driver failed: {} ({}); is the NVIDIA driver installed and loaded, and as new as the "
                          "CUDA runtime?",
                          cudaGetErrorString(err), cudaGetErrorName(err));
    return false;
  }
  if (ordinal < 0 || ordinal >= count) {
    error = fmt::format("GPU {} does not exist: {} visible", ordinal, count);
    return false;
  }
  cudaDeviceProp prop{};
  if (const cudaError_t err = cudaGetDeviceProperties(&prop, ordinal); err != cudaSuccess) {
    error = fmt::format("cannot read GPU {} properties: {}", ordinal, cudaGetErrorString(err));
    return false;
  }
  if (prop.major < 8) {
    error = fmt::format("{} is sm_{}{}; sdpa-prof needs sm_80 or newer", prop.name, prop.major, prop.minor);
    return false;
  }
  SDPA_CHECK_CUDA(cudaSetDevice(ordinal));
  info.ordinal = ordinal;
  info.name = prop.name;
  info.uuid = format_uuid(prop.uuid);
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.total_memory = prop.totalGlobalMem;
  info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  info.shared_per_block_optin = prop.sharedMemPerBlockOptin;
  info.ecc_enabled = prop.ECCEnabled != 0;
  SDPA_CHECK_CUDA(cudaDeviceGetAttribute(&info.sm_clock_khz, cudaDevAttrClockRate, ordinal));
  SDPA_CHECK_CUDA(cudaDriverGetVersion(&info.driver_version));
  SDPA_CHECK_CUDA(cudaRuntimeGetVersion(&info.runtime_version));
  cublasHandle_t handle = nullptr;
  SDPA_CHECK_CUBLAS(cublasCreate(&handle));
  const cublasStatus_t st = cublasGetVersion(handle, &info.cublas_version);
  cublasDestroy(handle);
  SDPA_CHECK_CUBLAS(st);
  info.cudnn_version = loaded_cudnn_version();
  return true;
}

std::size_t free_device_memory() {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  SDPA_CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}


}  // namespace sdpa
