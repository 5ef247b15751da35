// Measures the SM clock the GPU runs at right now, without changing it: one tiny kernel spins
// for a fixed number of cycles and reads both the cycle counter and the global nanosecond timer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace sdpa {

struct ClockProbe {
  long long cycles;
  unsigned long long nanoseconds;
};

// Writes one ClockProbe (device memory) after spinning for about `spin_cycles` cycles.
cudaError_t launch_clock_probe(ClockProbe* out, long long spin_cycles, cudaStream_t s);

}  // namespace sdpa
