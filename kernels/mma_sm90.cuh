// sm_90a building blocks of the flash3 kernel: mbarriers, TMA tile loads and stores, wgmma with
// shared-memory descriptors (128-byte swizzle) and fp32 accumulators, named barriers, setmaxnreg.
// Everything here is device code for sm_90a; the translation units that include it are built for
// that target only (kernels/CMakeLists.txt).
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace sdpa::sm90 {

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// The lane, read anew where it is called: values made from it are not hoisted out of loops.
__device__ __forceinline__ uint32_t lane_id_here() {
  uint32_t lane;
  asm volatile("mov.u32 %0, %%laneid;\n" : "=r"(lane));
  return lane;
}

__device__ __forceinline__ void store_shared_u32(uint32_t addr, uint32_t value) {
  asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(value) : "memory");
}
__device__ __forceinline__ void store_shared_f32x4(uint32_t addr, float x, float y, float z,
                                                   float w) {
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "f"(x), "f"(y), "f"(z),
               "f"(w)
               : "memory");
}
__device__ __forceinline__ float2 load_shared_f32x2(uint32_t addr) {
  float2 v;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(v.x), "=f"(v.y) : "r"(addr) : "memory");
  return v;
}

// ---- mbarrier: TMA completion (transaction bytes) and stage hand-back (arrivals).

__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}
// Makes the initialised barriers visible to the async proxy (TMA) before any copy uses them.
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Returns once the phase of parity `parity` has completed (a fresh barrier counts parity 1 as
// complete, so a producer's first wait on an empty slot passes).
__device__ __forceinline__ void mbarrier_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (done == 0);
}

// The same for a thread with nothing else to do (the producer): each try may suspend it for up to
// kSuspendNs, or until the phase completes, instead of the short limit of a plain try_wait, so
// its spinning does not take issue slots from the consumer warps of its scheduler.
__device__ __forceinline__ void mbarrier_wait_idle(uint32_t bar, uint32_t parity) {
  constexpr uint32_t kSuspendNs = 100000;
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity), "n"(kSuspendNs)
        : "memory");
  } while (done == 0);
}

// A global word written by another thread of this CTA before a release it has acquired (an
// mbarrier): a CTA-scope load sees it, from L1 if it is there (a volatile load would go to L2).
__device__ __forceinline__ uint32_t load_relaxed_cta(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.relaxed.cta.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// A value the compiler does not know to be the same in every lane (derived from threadIdx or
// loaded), made warp-uniform for it: what is computed from it then lives in uniform registers,
// and a wgmma descriptor built from it needs no move into them before each MMA.
__device__ __forceinline__ uint32_t warp_uniform(uint32_t x) { return __reduce_min_sync(~0u, x); }

// ---- TMA (cp.async.bulk.tensor) on 3-D maps {d, row, batch*head}.

__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                            int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3, %4}], [%5];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}
// The same on a 2-D map {row, head} (the backward's fp32 row statistics).
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                            int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}
// Elements of the box outside the tensor are not written: rows past the sequence stay untouched.
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, uint32_t src, int c0, int c1,
                                             int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
          reinterpret_cast<uint64_t>(map)),
      "r"(src), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}
// Adds `bytes` (a multiple of 16) of fp32 values from shared memory into global memory, element by
// element (the reduction happens in L2). Completes through the bulk group, as a store.
__device__ __forceinline__ void bulk_reduce_add_f32(float* dst, uint32_t src, uint32_t bytes) {
  asm volatile(
      "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(dst),
      "r"(src), "r"(bytes)
      : "memory");
}
__device__ __forceinline__ void tma_store_commit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// Returns once every committed store has read its shared-memory source (which may then be reused).
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
// Returns once every committed store has also been written to global memory.
__device__ __forceinline__ void tma_store_wait_all() {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}
// Ordinary shared-memory stores that the TMA engine reads next need this in each writing thread.
__device__ __forceinline__ void fence_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// ---- Named barriers (id 0 is __syncthreads).

__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// ---- Register reallocation between warpgroups (needs a register cap at kernel entry).

template <int kRegs>
__device__ __forceinline__ void raise_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void lower_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// Where accumulator columns 8j + 2t and + 1 of `row` (row % 8 == g) go, as two 16-bit values, in
// a tile of 64-column blocks of `col_block_bytes`, 128-byte rows swizzled as TMA's 128-byte
// swizzle lays them out: the 16-byte chunk j % 8 of a row sits at chunk (j % 8) ^ (row % 8).
__device__ __forceinline__ uint32_t swizzled_pair_offset(int j, int row, int g, int t,
                                                         int col_block_bytes) {
  return (j / 8) * col_block_bytes + row * 128 + (((j % 8) ^ g) * 16) + t * 4;
}

// ---- wgmma.

// A shared-memory matrix descriptor for a 128-byte-swizzled operand whose 1024-byte swizzle
// atoms (8 rows of 128 bytes) start 1024-aligned. K-major (Q, K): `stride` = 1024, the step
// between 8-row groups; `leading` is unused. MN-major (V, transposed on read): `stride` = 1024,
// the step between groups of 8 keys, `leading` = the step between 64-column blocks of D. The
// backward reads an MN-major A the same way (dS stored as dS^T: 8-key groups 1024 bytes apart).
__device__ __forceinline__ uint64_t smem_descriptor(uint32_t addr, uint32_t leading,
                                                    uint32_t stride) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) |
         (static_cast<uint64_t>((leading & 0x3FFFF) >> 4) << 16) |
         (static_cast<uint64_t>((stride & 0x3FFFF) >> 4) << 32) | (uint64_t{1} << 62);
}

// The descriptor of the operand `bytes` further on: the start address is the low 14 bits (in
// 16-byte units), and shared-memory addresses below 256 KB never carry out of them.
__device__ __forceinline__ uint64_t descriptor_at(uint64_t base, uint32_t bytes) {
  return base + (bytes >> 4);
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Keeps the compiler from moving reads or writes of accumulator registers across the
// asynchronous MMAs that own them.
template <int N>
__device__ __forceinline__ void fence_registers(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int M, int N>
__device__ __forceinline__ void fence_registers(uint32_t (&r)[M][N]) {
#pragma unroll
  for (int i = 0; i < M; ++i)
#pragma unroll
    for (int j = 0; j < N; ++j) asm volatile("" : "+r"(r[i][j])::"memory");
}

// The operand lists of one m64nNk16 wgmma: N/2 fp32 accumulators per thread. SS reads A and B
// through descriptors (both K-major); RS takes A from four registers and reads B transposed
// (MN-major). `scale_d` = 0 overwrites the accumulators instead of adding to them.
#define SDPA_WGMMA_SS_N128(TYPE)                                                                   \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                                 \
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE                                 \
      " {"                                                                                         \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, "           \
      "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, "           \
      "%34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, "           \
      "%50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"                       \
      "}, %64, %65, p, 1, 1, 0, 0;\n}\n"                                                           \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), \
        "+f"(d[63])                                                                                \
      : "l"(a_desc), "l"(b_desc), "r"(scale_d)                                                     \
      : "memory")

// m64n64k16 with both operands from shared memory, each K-major (0) or MN-major (1): the
// backward's S^T = K Q^T and dP^T = V dO^T (both K-major) and dQ = dS K (both MN-major).
#define SDPA_WGMMA_SS_N64(TYPE)                                                                    \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                                 \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE                                  \
      " {"                                                                                         \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, "           \
      "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"                       \
      "}, %32, %33, p, 1, 1, %35, %36;\n}\n"                                                       \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])                                         \
      : "l"(a_desc), "l"(b_desc), "r"(scale_d), "n"(kTransA), "n"(kTransB)                         \
      : "memory")

#define SDPA_WGMMA_RS_N64(TYPE)                                                                    \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                                 \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE                                  \
      " {"                                                                                         \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, "           \
      "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"                       \
      "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"                                             \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])                                         \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(scale_d)                      \
      : "memory")

#define SDPA_WGMMA_RS_N128(TYPE)                                                                   \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"                                                 \
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE                                 \
      " {"                                                                                         \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, "           \
      "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, "           \
      "%34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, "           \
      "%50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"                       \
      "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"                                             \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), \
        "+f"(d[63])                                                                                \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(scale_d)                      \
      : "memory")

template <typename T>
constexpr bool kIsBf16 = std::is_same_v<T, __nv_bfloat16>;

// d (64 x 128) (+)= A (64 x 16, K-major in shared memory) * B (16 x 128, K-major).
template <typename T>
__device__ __forceinline__ void wgmma_ss_n128(float (&d)[64], uint64_t a_desc, uint64_t b_desc,
                                              int scale_d) {
  if constexpr (kIsBf16<T>) {
    SDPA_WGMMA_SS_N128("bf16");
  } else {
    SDPA_WGMMA_SS_N128("f16");
  }
}

// d (64 x 64) (+)= A (64 x 16) * B (16 x 64), both in shared memory; kTransA / kTransB = 1: the
// operand is MN-major (read transposed), 0: K-major.
template <typename T, int kTransA, int kTransB>
__device__ __forceinline__ void wgmma_ss_n64(float (&d)[32], uint64_t a_desc, uint64_t b_desc,
                                             int scale_d) {
  static_assert((kTransA == 0 || kTransA == 1) && (kTransB == 0 || kTransB == 1));
  if constexpr (kIsBf16<T>) {
    SDPA_WGMMA_SS_N64("bf16");
  } else {
    SDPA_WGMMA_SS_N64("f16");
  }
}

// d (64 x N) (+)= A (64 x 16, registers) * B (16 x N, MN-major in shared memory), N = 64 or 128.
template <typename T, int N>
__device__ __forceinline__ void wgmma_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b_desc,
                                         int scale_d) {
  static_assert(N == 64 || N == 128, "wgmma_rs is written for N = 64 and 128");
  if constexpr (N == 64) {
    if constexpr (kIsBf16<T>) {
      SDPA_WGMMA_RS_N64("bf16");
    } else {
      SDPA_WGMMA_RS_N64("f16");
    }
  } else {
    if constexpr (kIsBf16<T>) {
      SDPA_WGMMA_RS_N128("bf16");
    } else {
      SDPA_WGMMA_RS_N128("f16");
    }
  }
}

#undef SDPA_WGMMA_SS_N128
#undef SDPA_WGMMA_SS_N64
#undef SDPA_WGMMA_RS_N64
#undef SDPA_WGMMA_RS_N128

}  // namespace sdpa::sm90
