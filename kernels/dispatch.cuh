// Turns the run-time DType into the CUDA element type for a templated launch.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "dtype.h"

namespace sdpa {

template <typename T>
struct TypeTag {
  using type = T;
};

template <typename F>
decltype(auto) dispatch_dtype(DType t, F&& f) {
  if (t == DType::bf16) return f(TypeTag<__nv_bfloat16>{});
  return f(TypeTag<__half>{});
}

}  // namespace sdpa
