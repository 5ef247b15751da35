// What the GPU can do at most, measured: dense 16-bit tensor-core GEMM rate, device-to-device
// copy bandwidth and HBM read bandwidth (kernels/read_bandwidth.h). Results are placed against
// these; io/ceilings_file.h caches them per device.
#pragma once

#include <string>

#include "model/device.h"

namespace sdpa {

Ceilings measure_ceilings(const DeviceInfo& device);

// How measure_ceilings measures, in words: kept with the figures, and a cache made another way is
// measured again.
std::string ceilings_method();

}  // namespace sdpa
