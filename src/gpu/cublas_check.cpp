#include "gpu/cublas_check.h"

namespace sdpa {

const char* cublas_status_text(cublasStatus_t status) {
  const char* name = cublasGetStatusName(status);
  return name != nullptr ? name : "unknown cuBLAS status";
}

}  // namespace sdpa
