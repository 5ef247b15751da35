// What the tool knows about the GPU it runs on and the libraries that loaded.
#pragma once

#include <cstddef>
#include <string>

#include "model/device.h"

namespace sdpa {


// Returns false with a sentence in `error` when no usable GPU or driver is present. When none is
// present at all, the sentence starts with kNoDevicePresent.
bool query_device(int ordinal, DeviceInfo& info, std::string& error);

// True when this machine has no CUDA device: no NVIDIA driver library, or none visible. False on
// a machine with a device whose driver or runtime fails: that is an error, not an absence.
bool no_cuda_device_present();

inline constexpr const char* kNoDevicePresent = "no CUDA GPU is present";

// The GPUs this process sees (CUDA_VISIBLE_DEVICES applies), without creating a context; 0 with
// the sentence in `error` when there are none or the driver fails.
int visible_device_count(std::string& error);

// Free device memory right now, in bytes.
std::size_t free_device_memory();


}  // namespace sdpa
