// RAII cuBLAS handle and the batched GEMMs of attention over [B, H, S, D] row-major tensors.
#pragma once

#include <cublas_v2.h>

#include "model/problem.h"

namespace sdpa {

class CublasHandle {
 public:
  CublasHandle();
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

// How the GEMMs compute: 16-bit operands on tensor cores, or true fp32 (SIMT, no TF32).
enum class GemmPrecision { tensor_core_16bit, fp32_simt };

// scores[b, h] = Q[b, h] * K[b, h / group]^T, one strided-batched call over B * Hkv batches:
// the `group` query heads sharing a key head are contiguous, so they form one taller matrix.
// Operands and scores have the problem's dtype (tensor_core_16bit) or fp32 (fp32_simt).
void gemm_scores(cublasHandle_t h, GemmPrecision precision, const Problem& p, const void* q,
                 const void* k, void* scores, cudaStream_t stream);
// out[b, h] = P[b, h] * V[b, h / group]; also dQ = dS * K.
void gemm_values(cublasHandle_t h, GemmPrecision precision, const Problem& p, const void* probs,
                 const void* v, void* out, cudaStream_t stream);
// out[b, kv] = sum over the group's heads h of M[b, h]^T * X[b, h]: [Skv, D] from the [Sq, Skv]
// score-shaped M and the [Sq, D] X of each query head (dV = P^T dO, dK = dS^T Q). The group's
// heads are one taller matrix, so one GEMM per (batch, kv head) sums over the group.
void gemm_key_grads(cublasHandle_t h, GemmPrecision precision, const Problem& p, const void* score_grads,
                    const void* x, void* out, cudaStream_t stream);
// The same transposed, out[b, kv] = [D, Skv]: the gradient of Kᵀ, as autograd's matmul
// backward computes it when the forward multiplied by k.transpose(-2, -1).
void gemm_key_grads_transposed(cublasHandle_t h, GemmPrecision precision, const Problem& p,
                               const void* score_grads, const void* x, void* out, cudaStream_t stream);

}  // namespace sdpa
