// GPU tests exit with 77 (CTest's skip code) only where no CUDA device is present. A device whose
// driver or runtime fails is a failure: a broken GPU machine must not read as "skipped".
#include <gtest/gtest.h>

#include <iostream>

#include "gpu/device_query.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  sdpa::DeviceInfo device;
  std::string error;
  if (!sdpa::query_device(0, device, error)) {
    if (sdpa::no_cuda_device_present()) {
      std::cout << "skipping GPU tests: " << error << "\n";
      return 77;
    }
    std::cout << "GPU tests failed: a CUDA device is present but unusable: " << error << "\n";
    return 1;
  }
  std::cout << "GPU: " << device.name << "\n";
  return RUN_ALL_TESTS();
}
