// A cold *and clean* L2 before a counter pass: none of the case's data and no dirty lines.
// (Nsight Compute's --cache-control all invalidates the L2; we know of no CUDA 13.0 call that can.)
// L2Flush writes its buffer, so the L2 it leaves is full of dirty lines that the next kernel
// writes back to DRAM as it evicts them (counted as that kernel's DRAM writes: +24 MB for a
// 9 MB kernel on the H200). This reads a buffer four times the L2's size that nothing writes, so
// the write-backs happen here and the L2 ends holding clean lines only. (Small kernels still
// count 2-8% more DRAM writes than ncu with twice or four times the L2, and as much with the L2
// discarded after the read or the last output's lines dropped: docs/counters-notes.md.)
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "gpu/cublas_handle.h"
#include "gpu/device_buffer.h"

namespace sdpa {

inline constexpr std::size_t kL2CleanFactor = 4;  // the buffer read, in L2 sizes

class L2Clean {
 public:
  explicit L2Clean(std::size_t l2_bytes);
  void clean(cudaStream_t stream);

 private:
  DeviceBuffer buffer_;
  CublasHandle cublas_;
};

}  // namespace sdpa
