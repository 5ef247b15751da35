#include "backends/cudnn/cudnn_library.h"

#include <dlfcn.h>
#include <link.h>

#include <fmt/format.h>

namespace sdpa {
namespace {

constexpr const char* kCudnnSoname = "libcudnn.so.9";  // the backend descriptor API this build uses

struct Loaded {
  CudnnApi api;
  std::string error;  // empty when api is usable
};

template <typename Fn>
void resolve(void* library, const char* symbol, Fn& fn, std::string& error) {
  fn = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (fn == nullptr && error.empty()) error = fmt::format("{} lacks {}", kCudnnSoname, symbol);
}

Loaded load() {
  Loaded l;
  void* library = dlopen(kCudnnSoname, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    l.error = fmt::format("cuDNN could not be loaded ({})", dlerror());
    return l;
  }
  const link_map* map = nullptr;
  l.api.path =
      dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr ? map->l_name : kCudnnSoname;

  CudnnApi& a = l.api;
  resolve(library, "cudnnGetVersion", a.cudnnGetVersion, l.error);
  resolve(library, "cudnnGetErrorString", a.cudnnGetErrorString, l.error);
  resolve(library, "cudnnGetLastErrorString", a.cudnnGetLastErrorString, l.error);
  resolve(library, "cudnnCreate", a.cudnnCreate, l.error);
  resolve(library, "cudnnDestroy", a.cudnnDestroy, l.error);
  resolve(library, "cudnnSetStream", a.cudnnSetStream, l.error);
  resolve(library, "cudnnBackendCreateDescriptor", a.cudnnBackendCreateDescriptor, l.error);
  resolve(library, "cudnnBackendDestroyDescriptor", a.cudnnBackendDestroyDescriptor, l.error);
  resolve(library, "cudnnBackendSetAttribute", a.cudnnBackendSetAttribute, l.error);
  resolve(library, "cudnnBackendGetAttribute", a.cudnnBackendGetAttribute, l.error);
  resolve(library, "cudnnBackendFinalize", a.cudnnBackendFinalize, l.error);
  resolve(library, "cudnnBackendExecute", a.cudnnBackendExecute, l.error);
  if (l.error.empty()) a.version = a.cudnnGetVersion();
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const CudnnApi* load_cudnn(std::string& why) {
  const Loaded& l = loaded();
  why = l.error;
  return l.error.empty() ? &l.api : nullptr;
}

const CudnnApi& cudnn() {
  return loaded().api;
}

std::string cudnn_last_error() {
  const CudnnApi& a = loaded().api;
  if (a.cudnnGetLastErrorString == nullptr) return {};
  char message[1024] = {};
  a.cudnnGetLastErrorString(message, sizeof message);
  return message;
}

std::string cudnn_status_text(int status) {
  const CudnnApi& a = loaded().api;
  const char* name = a.cudnnGetErrorString != nullptr
                         ? a.cudnnGetErrorString(static_cast<cudnnStatus_t>(status))
                         : nullptr;
  std::string text = name != nullptr ? name : fmt::format("cuDNN status {}", status);
  if (const std::string last = cudnn_last_error(); !last.empty()) text += ": " + last;
  return text;
}

std::string cudnn_version_text(std::size_t version) {
  return fmt::format("{}.{}.{}", version / 10000, version % 10000 / 100, version % 100);
}

}  // namespace sdpa
