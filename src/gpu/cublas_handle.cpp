#include "gpu/cublas_handle.h"

#include "gpu/cublas_check.h"

namespace sdpa {
namespace {

struct GemmTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
};

GemmTypes gemm_types(GemmPrecision precision, DType dtype) {
  if (precision == GemmPrecision::fp32_simt) return {CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC};
  return {dtype == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F, CUBLAS_COMPUTE_32F};
}

// Row-major C[M, N] = A[M, K] * B is column-major C^T = B^T * A^T: cuBLAS sees the operands
// swapped. Each batch is one (batch, kv-head) with M = group * Sq query rows.
void batched_gemm(cublasHandle_t h, GemmPrecision precision, const Problem& p, cublasOperation_t op_a,
                  cublasOperation_t op_b, int m, int n, int k, const void* a, int lda, long long stride_a, const void* b,
                  int ldb, long long stride_b, void* c, int ldc, long long stride_c,
                  cudaStream_t stream) {
  const GemmTypes types = gemm_types(precision, p.dtype);
  const float alpha = 1.f;
  const float beta = 0.f;
  SDPA_CHECK_CUBLAS(cublasSetStream(h, stream));
  SDPA_CHECK_CUBLAS(cublasGemmStridedBatchedEx(
      h, op_a, op_b, m, n, k, &alpha, a, types.data, lda, stride_a, b, types.data, ldb,
      stride_b, &beta, c, types.data, ldc, stride_c, static_cast<int>(p.batch * p.kv_heads),
      types.compute, CUBLAS_GEMM_DEFAULT));
}

}  // namespace

CublasHandle::CublasHandle() { SDPA_CHECK_CUBLAS(cublasCreate(&handle_)); }
CublasHandle::~CublasHandle() { cublasDestroy(handle_); }

void gemm_scores(cublasHandle_t h, GemmPrecision precision, const Problem& p, const void* q,
                 const void* k, void* scores, cudaStream_t stream) {
  const long long rows = p.group_size() * p.seq_q;  // query rows per kv head
  // scores^T[Skv, rows] = K[Skv, D] (op T on its column-major [D, Skv] view) * Q^T[D, rows]
  batched_gemm(h, precision, p, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(p.seq_kv), static_cast<int>(rows),
               static_cast<int>(p.head_dim), k, static_cast<int>(p.head_dim), p.seq_kv * p.head_dim,
               q, static_cast<int>(p.head_dim), rows * p.head_dim, scores,
               static_cast<int>(p.seq_kv), rows * p.seq_kv, stream);
}

void gemm_values(cublasHandle_t h, GemmPrecision precision, const Problem& p, const void* probs,
                 const void* v, void* out, cudaStream_t stream) {
  const long long rows = p.group_size() * p.seq_q;
  // out^T[D, rows] = V^T[D, Skv] * P^T[Skv, rows]
  batched_gemm(h, precision, p, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(p.head_dim), static_cast<int>(rows),
               static_cast<int>(p.seq_kv), v, static_cast<int>(p.head_dim), p.seq_kv * p.head_dim,
               probs, static_cast<int>(p.seq_kv), rows * p.seq_kv, out,
               static_cast<int>(p.head_dim), rows * p.head_dim, stream);
}

void gemm_key_grads(cublasHandle_t h, GemmPrecision precision, const Problem& p, const void* score_grads,
                    const void* x, void* out, cudaStream_t stream) {
  const long long rows = p.group_size() * p.seq_q;
  // out^T[D, Skv] = X^T[D, rows] * M[rows, Skv]: M's column-major view is [Skv, rows], taken with op T.
  batched_gemm(h, precision, p, CUBLAS_OP_N, CUBLAS_OP_T, static_cast<int>(p.head_dim), static_cast<int>(p.seq_kv),
               static_cast<int>(rows), x, static_cast<int>(p.head_dim), rows * p.head_dim, score_grads,
               static_cast<int>(p.seq_kv), rows * p.seq_kv, out, static_cast<int>(p.head_dim),
               p.seq_kv * p.head_dim, stream);
}

void gemm_key_grads_transposed(cublasHandle_t h, GemmPrecision precision, const Problem& p,
                               const void* score_grads, const void* x, void* out, cudaStream_t stream) {
  const long long rows = p.group_size() * p.seq_q;
  // out^T[Skv, D] = M[Skv, rows] * X[rows, D]: M's column-major view is [Skv, rows], X's [D, rows] taken with op T.
  batched_gemm(h, precision, p, CUBLAS_OP_N, CUBLAS_OP_T, static_cast<int>(p.seq_kv), static_cast<int>(p.head_dim),
               static_cast<int>(rows), score_grads, static_cast<int>(p.seq_kv), rows * p.seq_kv, x,
               static_cast<int>(p.head_dim), rows * p.head_dim, out, static_cast<int>(p.seq_kv),
               p.seq_kv * p.head_dim, stream);
}

}  // namespace sdpa
