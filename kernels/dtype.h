// Element types shared by host code and device launchers.
#pragma once

namespace sdpa {

enum class DType { bf16, fp16 };

inline constexpr int dtype_bytes(DType) { return 2; }

}  // namespace sdpa
