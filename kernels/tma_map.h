// TMA tensor maps for the Hopper kernel, built on the host through the driver's entry point
// (the runtime hands it out, so nothing links libcuda).
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "dtype.h"

namespace sdpa {

// A 3-D map {head_dim, rows, heads} over a contiguous [heads, rows, head_dim] tensor of 16-bit
// values, read and written in boxes of 64 columns (128 bytes, the 128-byte swizzle) x box_rows
// rows of one head. Loads fill elements outside the tensor with zeros; stores skip them.
// cudaErrorNotSupported when the driver has no cuTensorMapEncodeTiled, cudaErrorInvalidValue
// when it refuses the map.
cudaError_t encode_head_major_map(CUtensorMap& map, const void* base, DType dtype, int64_t heads,
                                  int64_t rows, int head_dim, int box_rows);

// A 2-D map {rows, heads} over a contiguous [heads, rows] fp32 tensor (the backward's row
// statistics), read in boxes of box_rows rows of one head, unswizzled. TMA needs the step between
// heads to be a multiple of 16 bytes: `rows` a multiple of 4 (cudaErrorInvalidValue otherwise).
cudaError_t encode_row_stats_map(CUtensorMap& map, const float* base, int64_t heads, int64_t rows,
                                 int box_rows);

}  // namespace sdpa
