// A kernel that writes through a pointer no allocation owns: the illegal address that poisons a
// CUDA context, for the test that a sweep stops with the results it has.
#include "fault_kernel.h"

namespace sdpa::test {
namespace {

__global__ void write_to_nowhere(float* p) { p[threadIdx.x] = 1.f; }

}  // namespace

cudaError_t launch_illegal_address_write(cudaStream_t stream) {
  write_to_nowhere<<<1, 32, 0, stream>>>(reinterpret_cast<float*>(0x10));
  return cudaGetLastError();
}

}  // namespace sdpa::test
