// Which profiler or sanitizer is attached, from the loaded objects and CUDA_INJECTION64_PATH:
// measured ceilings are cached only when none is.
#include <gtest/gtest.h>

#include "gpu/attached_tool.h"

namespace sdpa {
namespace {

const std::vector<std::string> kPlainProcess = {
    "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
    "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13", "/lib/x86_64-linux-gnu/libc.so.6"};

std::vector<std::string> with(std::string object) {
  std::vector<std::string> objects = kPlainProcess;
  objects.push_back(std::move(object));
  return objects;
}

TEST(AttachedTool, APlainProcessHasNone) {
  EXPECT_EQ(attached_gpu_tool(kPlainProcess, nullptr), "");
  EXPECT_EQ(attached_gpu_tool(kPlainProcess, ""), "");
  EXPECT_EQ(attached_gpu_tool({}, nullptr), "");
}

TEST(AttachedTool, EachToolIsNamedByItsFolderOrLibrary) {
  EXPECT_EQ(attached_gpu_tool(with("/usr/local/cuda/compute-sanitizer/libsanitizer-collection.so"),
                              nullptr),
            "compute-sanitizer");
  EXPECT_EQ(attached_gpu_tool(
                with("/opt/nvidia/nsight-compute/2025.3.1/target/linux-desktop-glibc_2_11_3-x64/"
                     "libTreeLauncherTargetInjection.so"),
                nullptr),
            "Nsight Compute");
  // Nsight Compute and compute-sanitizer ship the same injection libraries: the folder names the
  // tool, wherever in the list it comes.
  EXPECT_EQ(
      attached_gpu_tool(
          {"/usr/lib/nvidia-cuda-toolkit/compute-sanitizer/libTreeLauncherTargetInjection.so"},
          nullptr),
      "compute-sanitizer");
  EXPECT_EQ(attached_gpu_tool({"/opt/tools/libTreeLauncherTargetInjection.so",
                               "/opt/nvidia/nsight-compute/2025.3.1/target/"
                               "linux-desktop-glibc_2_11_3-x64/libcuda-injection.so"},
                              nullptr),
            "Nsight Compute");
  EXPECT_EQ(attached_gpu_tool(with("/opt/tools/libInterceptorInjectionTarget.so"), nullptr),
            "an NVIDIA tool's injection library (/opt/tools/libInterceptorInjectionTarget.so)");
  EXPECT_EQ(attached_gpu_tool(with("/usr/local/cuda-13.0/nsight-systems-2025.3.2/target-linux-x64/"
                                   "libToolsInjection64.so"),
                              nullptr),
            "Nsight Systems");
}

TEST(AttachedTool, AnyInjectionLibraryCounts) {
  EXPECT_EQ(attached_gpu_tool(kPlainProcess, "/home/me/libmytracer.so"),
            "a CUDA injection library (/home/me/libmytracer.so)");
  // A known tool is named before the library it was injected through.
  EXPECT_EQ(attached_gpu_tool(with("/usr/local/cuda/compute-sanitizer/libsanitizer-collection.so"),
                              "/usr/local/cuda/compute-sanitizer/libsanitizer-collection.so"),
            "compute-sanitizer");
}

}  // namespace
}  // namespace sdpa
