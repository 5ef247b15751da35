#include "gpu/attached_tool.h"

#include <link.h>

#include <cstdlib>

#include <fmt/format.h>

namespace sdpa {
namespace {

struct ToolMark {
  const char* in_path;  // a folder or library name the tool's injected objects carry
  const char* tool;
};
// The tools' folders and their own libraries, which name the tool.
constexpr ToolMark kToolMarks[] = {
    {"compute-sanitizer", "compute-sanitizer"}, {"libsanitizer-collection", "compute-sanitizer"},
    {"nsight-compute", "Nsight Compute"},       {"nsight-systems", "Nsight Systems"},
    {"libToolsInjection", "Nsight Systems"},
};
// Injection libraries that Nsight Compute and compute-sanitizer both ship: a tool, but not which.
constexpr const char* kSharedInjectionLibraries[] = {"libTreeLauncherTargetInjection",
                                                     "libInterceptorInjectionTarget"};

int collect_object(dl_phdr_info* info, size_t, void* data) {
  if (info->dlpi_name != nullptr && *info->dlpi_name != '\0')
    static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
  return 0;
}

}  // namespace

std::string attached_gpu_tool(const std::vector<std::string>& loaded_objects,
                              const char* injection_path) {
  for (const std::string& object : loaded_objects)
    for (const ToolMark& mark : kToolMarks)
      if (object.find(mark.in_path) != std::string::npos) return mark.tool;
  for (const std::string& object : loaded_objects)
    for (const char* library : kSharedInjectionLibraries)
      if (object.find(library) != std::string::npos)
        return fmt::format("an NVIDIA tool's injection library ({})", object);
  if (injection_path != nullptr && *injection_path != '\0')
    return fmt::format("a CUDA injection library ({})", injection_path);
  return {};
}

std::string attached_gpu_tool() {
  std::vector<std::string> objects;
  dl_iterate_phdr(collect_object, &objects);
  return attached_gpu_tool(objects, std::getenv("CUDA_INJECTION64_PATH"));
}

}  // namespace sdpa
