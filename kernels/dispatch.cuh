// Turns run-time values (dtype, head dim) into template parameters for a templated launch, as
// FlashAttention-2's static_switch.h does, with generic lambdas instead of macros.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

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

// The values a template is instantiated for, such as the head dims a kernel is compiled for.
template <int... kValues>
struct IntList {};

// f(std::integral_constant<int, V>{}) for the V in the list that equals `value`, else `otherwise`.
template <int... kValues, typename R, typename F>
R dispatch_int(IntList<kValues...>, int64_t value, R otherwise, F&& f) {
  R result = otherwise;
  ((value == kValues && (result = f(std::integral_constant<int, kValues>{}), true)) || ...);
  return result;
}

}  // namespace sdpa
