// A Hopper GPU as the backends' limits see it (compute capability 9.0, 227 KiB of opt-in shared
// memory a block): for unit tests that ask what runs where, without a GPU.
#pragma once

#include "model/device.h"

namespace sdpa::test {

inline DeviceInfo hopper_device() {
  DeviceInfo d;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.shared_per_block_optin = 227 * 1024;
  return d;
}

}  // namespace sdpa::test
