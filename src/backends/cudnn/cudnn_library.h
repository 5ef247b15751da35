// cuDNN, loaded at run time with dlopen: sdpa-prof starts, and every other backend runs, where
// libcudnn is missing; the cudnn backend then skips its cases with the loader's reason.
#pragma once

#include <cudnn_graph.h>

#include <cstddef>
#include <string>

namespace sdpa {

// The cuDNN entry points the cudnn backend calls, named as cuDNN names them (so that a failed
// call's text in an error reads as the cuDNN call).
struct CudnnApi {
  decltype(&::cudnnGetVersion) cudnnGetVersion = nullptr;
  decltype(&::cudnnGetErrorString) cudnnGetErrorString = nullptr;
  decltype(&::cudnnGetLastErrorString) cudnnGetLastErrorString = nullptr;
  decltype(&::cudnnCreate) cudnnCreate = nullptr;
  decltype(&::cudnnDestroy) cudnnDestroy = nullptr;
  decltype(&::cudnnSetStream) cudnnSetStream = nullptr;
  decltype(&::cudnnBackendCreateDescriptor) cudnnBackendCreateDescriptor = nullptr;
  decltype(&::cudnnBackendDestroyDescriptor) cudnnBackendDestroyDescriptor = nullptr;
  decltype(&::cudnnBackendSetAttribute) cudnnBackendSetAttribute = nullptr;
  decltype(&::cudnnBackendGetAttribute) cudnnBackendGetAttribute = nullptr;
  decltype(&::cudnnBackendFinalize) cudnnBackendFinalize = nullptr;
  decltype(&::cudnnBackendExecute) cudnnBackendExecute = nullptr;
  std::string path;         // the file that loaded
  std::size_t version = 0;  // cudnnGetVersion of the loaded library, e.g. 91400
};

// Loads libcudnn.so.9 once per process. nullptr, with the reason in `why`, when it is missing or
// lacks an entry point.
const CudnnApi* load_cudnn(std::string& why);

// The loaded API; only valid after load_cudnn succeeded.
const CudnnApi& cudnn();

// cuDNN's last error message on this thread ("" when it has none), cleared by the read.
std::string cudnn_last_error();

// The loaded library's name for a status, then its last error message.
std::string cudnn_status_text(int status);

// "9.14.0" for cudnnGetVersion's 91400.
std::string cudnn_version_text(std::size_t version);

}  // namespace sdpa
