// What the GPU can do at most, measured: dense 16-bit tensor-core GEMM rate, device-to-device
// copy bandwidth and HBM read bandwidth (kernels/read_bandwidth.h). Results are placed against
// these; io/ceilings_file.h caches them per device.
#pragma once

#include <ostream>
#include <string>

#include "model/device.h"

namespace sdpa {

Ceilings measure_ceilings(const DeviceInfo& device);
// measure_ceilings, then the figures cached for the next run; not cached, and `progress` says why,
// when `attached_tool` names a profiler or sanitizer (gpu/attached_tool.h): its kernel times are
// not the GPU's, and a cache would hold them for every later run.
Ceilings measure_and_cache_ceilings(const DeviceInfo& device, const std::string& attached_tool,
                                    std::ostream& progress);

// How measure_ceilings measures, in words: kept with the figures, and a cache made another way is
// measured again.
std::string ceilings_method();

}  // namespace sdpa
