// CUPTI's check macro: a failed call throws ApiError with the loaded library's text for the result;
// and CUPTI's parameter structs, made ready to fill.
#pragma once

#include <cstddef>

#include "gpu/check.h"
#include "profile/cupti_library.h"

#define SDPA_CHECK_CUPTI(call)                                                           \
  do {                                                                                   \
    const CUptiResult sdpa_cr_ = (call);                                                 \
    if (sdpa_cr_ != CUPTI_SUCCESS)                                                       \
      ::sdpa::throw_api_error("CUPTI", #call, __FILE__, __LINE__,                        \
                              ::sdpa::cupti_result_text(sdpa_cr_));                      \
  } while (0)

namespace sdpa {

// A CUPTI parameter struct, zeroed, with its size set.
template <typename P>
P cupti_params(std::size_t struct_size) {
  P p{};
  p.structSize = struct_size;
  return p;
}

}  // namespace sdpa
