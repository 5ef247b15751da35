// sm_80 building blocks of the fused attention kernels: cp.async, ldmatrix, mma.sync
// m16n8k16 with fp32 accumulators, 16-bit packing, exp2, and the XOR swizzle of 16-byte chunks.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace sdpa::sm80 {

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global -> shared copy; `valid == false` writes zeros and reads nothing.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 16 : 0));
}
// 4-byte global -> shared copy through L1 (.cg takes only 16 bytes): for rows of fp32 statistics
// whose start need not be 16-byte aligned. `valid == false` writes zeros and reads nothing.
__device__ __forceinline__ void cp_async_4(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 4 : 0));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// c += a * b for one m16n8k16 tile with fp32 accumulators.
template <typename T>
__device__ __forceinline__ void mma_16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                          uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Two floats as one register of two 16-bit values, the lower column in the low half.
template <typename T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
}

// The inverse of pack2: the low half as x, the high half as y.
template <typename T>
__device__ __forceinline__ float2 unpack2(uint32_t v) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&v));
  } else {
    return __half22float2(*reinterpret_cast<const __half2*>(&v));
  }
}

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Swizzled shared-memory tiles: the 16-byte chunk c of row r lives at chunk c ^ (r % 8). A lane
// whose ldmatrix row has phase r % 8 and which reads chunk 2j + hi of a 128-byte-aligned row
// finds it at (row | ((hi ^ r % 8) * 16)) ^ ((j % 4) * 32), plus `next_line` bytes for every 4
// pairs: 128 where a row's lines follow each other, a 64-column half's bytes where a tile is
// stored as halves of 128-byte rows (TMA's boxes).
__device__ __forceinline__ uint32_t swizzled_pair(uint32_t lane_base, int j, int next_line = 128) {
  return (lane_base ^ static_cast<uint32_t>((j % 4) * 32)) +
         static_cast<uint32_t>((j / 4) * next_line);
}
// The same address as an offset from the tile's first row: lane row `row` (whose phase is row % 8)
// reading chunk 2j + hi. For a compile-time j, pairs j % 4 are four offsets a lane can keep in
// registers; the rest of j and of the row is an immediate added to them.
__device__ __forceinline__ uint32_t swizzled_lane_offset(int row, int hi, int row_bytes, int j) {
  return static_cast<uint32_t>(row * row_bytes + ((((j % 4) * 2 + hi) ^ (row % 8)) * 16) +
                               (j / 4) * 128);
}

// Scores of keys at or past `key_end`, and when causal of keys after the query, set to -inf.
// Element (mt, nt, e) of m16n8 accumulator tiles is key nt*8 + e%2 of row mt*16 + (e/2)*8, both
// counted from the thread's first key (2t) and row (g); the query at row r sees keys up to
// diag + r, so both limits are one per-thread number compared with compile-time offsets.
template <bool kCausal, int kMTiles, int kNTiles>
__device__ __forceinline__ void mask_scores(float (&acc)[kMTiles][kNTiles][4], int key_end,
                                            int diag) {
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = nt * 8 + e % 2;
        if (key >= key_end || (kCausal && key > diag + mt * 16 + (e / 2) * 8))
          acc[mt][nt][e] = -INFINITY;
      }
}

}  // namespace sdpa::sm80
