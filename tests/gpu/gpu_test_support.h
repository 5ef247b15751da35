// Shared by the GPU tests.
#pragma once

#include "measure/timing.h"

namespace sdpa {

// Correctness tests time nothing worth reading: one sample, no warm-up, no L2 flush.
inline TimingOptions one_sample_timing() {
  TimingOptions t;
  t.warmup = 0;
  t.hot = true;
  t.stopping.min_samples = 1;
  t.stopping.min_time_s = 0;
  t.stopping.timeout_s = 0;
  return t;
}

}  // namespace sdpa
