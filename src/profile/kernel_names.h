// Kernel names as a person reads them: demangled, shortened, and sorted into categories.
#pragma once

#include <cstddef>
#include <string>

#include "model/result.h"

namespace sdpa {

// The demangled name, or `name` itself when it is not a mangled C++ name (cuBLAS's are not).
std::string demangle(const std::string& name);

// "void sdpa::(anonymous namespace)::scale_kernel<__nv_bfloat16>(__nv_bfloat16 const*, ...)"
// -> "scale_kernel<__nv_bfloat16>": no return type, arguments or namespaces; at most
// `max_chars` characters, the cut marked with "...".
std::string shorten_kernel_name(const std::string& demangled, std::size_t max_chars = 80);

// By name patterns of cuBLAS, cuDNN, PyTorch and this tool's kernels.
KernelCategory categorize_kernel(const std::string& demangled);

}  // namespace sdpa
