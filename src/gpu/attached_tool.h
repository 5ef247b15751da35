// A profiler or sanitizer attached to this process. Under one, kernels run serialised, replayed
// or instrumented, so the times they take are not the GPU's: measured ceilings are then not cached.
#pragma once

#include <string>
#include <vector>

namespace sdpa {

// What is attached, in words ("compute-sanitizer", "Nsight Compute", "Nsight Systems", "an NVIDIA
// tool's injection library (PATH)" or "a CUDA injection library (PATH)"), or empty when nothing
// is: by the shared objects loaded into the process (a tool's install folder or library) and
// CUDA_INJECTION64_PATH, through which CUDA loads a tool at initialisation. Call after CUDA is
// initialised.
std::string attached_gpu_tool();
// The same from the loaded objects' paths and CUDA_INJECTION64_PATH's value (null: unset).
std::string attached_gpu_tool(const std::vector<std::string>& loaded_objects,
                              const char* injection_path);

}  // namespace sdpa
