// What the tool knows about the GPU it runs on and the libraries that loaded.
#pragma once

#include <cstddef>
#include <string>

namespace sdpa {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  std::string uuid;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::size_t total_memory = 0;
  std::size_t l2_bytes = 0;
  std::size_t shared_per_block_optin = 0;
  int sm_clock_khz = 0;     // peak SM clock the driver reports
  bool ecc_enabled = false;
  int driver_version = 0;   // as cudaDriverGetVersion reports, e.g. 13000
  int runtime_version = 0;  // cudaRuntimeGetVersion
  int cublas_version = 0;   // cublasGetVersion of the loaded library
  std::size_t cudnn_version = 0;  // of the libcudnn.so.9 the loader finds; 0 when none

  int arch() const { return cc_major * 10 + cc_minor; }  // 90 for sm_90
};

// Returns false with a sentence in `error` when no usable GPU or driver is present.
bool query_device(int ordinal, DeviceInfo& info, std::string& error);

// Free device memory right now, in bytes.
std::size_t free_device_memory();

std::string version_text(int cuda_style_version);  // 13000 -> "13.0"

}  // namespace sdpa
