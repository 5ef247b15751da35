#include "clock_probe.h"

namespace sdpa {
namespace {

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void clock_probe_kernel(ClockProbe* out, long long spin_cycles) {
  const unsigned long long t0 = global_timer_ns();
  const long long c0 = clock64();
  long long c = c0;
  while (c - c0 < spin_cycles) c = clock64();
  const unsigned long long t1 = global_timer_ns();
  out->cycles = c - c0;
  out->nanoseconds = t1 - t0;
}

}  // namespace

cudaError_t launch_clock_probe(ClockProbe* out, long long spin_cycles, cudaStream_t s) {
  clock_probe_kernel<<<1, 1, 0, s>>>(out, spin_cycles);
  return cudaGetLastError();
}

}  // namespace sdpa
