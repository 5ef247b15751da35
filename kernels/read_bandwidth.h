// The HBM read ceiling's kernel: reads a buffer once and writes almost nothing, as a decode
// forward reads its KV cache (a device-to-device copy writes as much as it reads).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace sdpa {

// Reads `bytes` of `src` (16-byte aligned, a multiple of 16) with 16-byte streaming loads on
// `blocks` blocks, `loads_in_flight` (4 or 8) issued by each thread before the first is used; a
// block's loads of one step cover one contiguous tile. Each block writes one word to
// `sink[block]`, so the loads cannot be dropped.
cudaError_t launch_read_bandwidth(const void* src, std::size_t bytes, uint32_t* sink, int blocks,
                                  int loads_in_flight, cudaStream_t stream);

// Threads per block of that kernel.
inline constexpr int kReadBandwidthBlock = 512;

}  // namespace sdpa
