// One call of a case captured into a CUDA graph and instantiated (--launch graph): its replays,
// one cudaGraphLaunch each, are what a graph case verifies, profiles and times.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace sdpa {

class CapturedCall {
 public:
  // Captures `call` on `stream` and instantiates the graph; nullptr, with CUDA's (or the
  // library's) error in `why_not`, when the call cannot be captured: it synchronizes, allocates
  // or copies through pageable memory, touches the legacy stream, launches on a stream it does not
  // join back, or launches nothing. The stream is out of capture again either way.
  //
  // Thread-local capture mode: the calls that capture forbids (cudaMalloc, a synchronization) fail
  // when this thread makes them, which is the thread that runs the backend, so a backend that
  // makes one inside run() is caught; other threads of the process (another GPU's worker, the
  // NVML reader) keep working, as they would not under the global mode, and the relaxed mode would
  // let a cudaMalloc inside run() through, leaving the replays on the one buffer it made.
  static std::unique_ptr<CapturedCall> capture(const std::function<void(cudaStream_t)>& call,
                                               cudaStream_t stream, std::string& why_not);
  ~CapturedCall();
  CapturedCall(const CapturedCall&) = delete;
  CapturedCall& operator=(const CapturedCall&) = delete;

  // One replay on `stream`, asynchronous like the call it stands for.
  void launch(cudaStream_t stream) const;

  std::size_t nodes() const { return nodes_; }
  double capture_ms() const { return capture_ms_; }  // host time of the captured call
  double instantiate_ms() const { return instantiate_ms_; }

 private:
  CapturedCall() = default;

  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::size_t nodes_ = 0;
  double capture_ms_ = 0;
  double instantiate_ms_ = 0;
};

}  // namespace sdpa
