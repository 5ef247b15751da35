// What the tool knows about the GPU it runs on and the libraries that loaded.
#pragma once

#include <cstddef>
#include <string>

#include "model/device.h"

namespace sdpa {


// Returns false with a sentence in `error` when no usable GPU or driver is present.
bool query_device(int ordinal, DeviceInfo& info, std::string& error);

// Free device memory right now, in bytes.
std::size_t free_device_memory();


}  // namespace sdpa
