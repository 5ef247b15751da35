// The GPU a run used and its measured ceilings, as plain data.
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

struct Ceilings {
  std::string device_name;
  std::string device_uuid;
  double bf16_gemm_tflops = 0;
  double fp16_gemm_tflops = 0;
  double copy_tb_per_s = 0;  // bytes read plus bytes written, per second
  // Bytes read per second by a kernel that only reads: the ceiling of a memory-bound forward,
  // which reads its inputs and writes little. 0: not measured (ceilings from before it).
  double read_tb_per_s = 0;
  std::string method;        // what was measured, for the record
  std::string measured_at;   // ISO 8601, UTC
};

std::string version_text(int cuda_style_version);  // 13000 -> "13.0"

// "1.50 GiB".
std::string gib_text(std::size_t bytes);

}  // namespace sdpa
