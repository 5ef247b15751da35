#include "gpu/cuda_graph.h"

#include <chrono>

#include <fmt/format.h>

#include "gpu/check.h"

namespace sdpa {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Ends a capture that failed: the stream leaves capture mode, whatever graph it made is dropped
// and the error the failed call left is cleared (capture errors do not poison the context).
void abandon_capture(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) == cudaSuccess &&
      status != cudaStreamCaptureStatusNone) {
    cudaGraph_t partial = nullptr;
    (void)cudaStreamEndCapture(stream, &partial);
    if (partial != nullptr) (void)cudaGraphDestroy(partial);
  }
  (void)cudaGetLastError();
}

std::string cuda_error_text(cudaError_t err) {
  return fmt::format("{}: {}", cudaGetErrorName(err), cudaGetErrorString(err));
}

}  // namespace

std::unique_ptr<CapturedCall> CapturedCall::capture(const std::function<void(cudaStream_t)>& call,
                                                    cudaStream_t stream, std::string& why_not) {
  std::unique_ptr<CapturedCall> out(new CapturedCall());
  SDPA_CHECK_CUDA(cudaStreamSynchronize(stream));
  SDPA_CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const auto captured = std::chrono::steady_clock::now();
  try {
    call(stream);
  } catch (const ApiError& e) {
    abandon_capture(stream);
    why_not = fmt::format("cannot be captured into a CUDA graph: {}", e.what());
    return nullptr;
  } catch (...) {
    abandon_capture(stream);
    throw;
  }
  if (const cudaError_t err = cudaStreamEndCapture(stream, &out->graph_); err != cudaSuccess) {
    abandon_capture(stream);
    why_not = fmt::format("cannot be captured into a CUDA graph: cudaStreamEndCapture: {}",
                          cuda_error_text(err));
    return nullptr;
  }
  out->capture_ms_ = ms_since(captured);
  SDPA_CHECK_CUDA(cudaGraphGetNodes(out->graph_, nullptr, &out->nodes_));
  if (out->nodes_ == 0) {
    why_not = "cannot be captured into a CUDA graph: the call put no work on the capturing stream";
    return nullptr;
  }
  const auto instantiated = std::chrono::steady_clock::now();
  if (const cudaError_t err = cudaGraphInstantiate(&out->exec_, out->graph_, 0);
      err != cudaSuccess) {
    (void)cudaGetLastError();
    why_not = fmt::format("the captured CUDA graph does not instantiate: {}", cuda_error_text(err));
    return nullptr;
  }
  out->instantiate_ms_ = ms_since(instantiated);
  return out;
}

CapturedCall::~CapturedCall() {
  if (exec_ != nullptr) (void)cudaGraphExecDestroy(exec_);
  if (graph_ != nullptr) (void)cudaGraphDestroy(graph_);
}

void CapturedCall::launch(cudaStream_t stream) const {
  SDPA_CHECK_CUDA(cudaGraphLaunch(exec_, stream));
}

}  // namespace sdpa
