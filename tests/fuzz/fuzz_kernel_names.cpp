// The kernel-name shortener on any text, as trace and the timeline meet a traced process's kernel
// names (profile/kernel_names.h): demangled, shortened, categorized. A name of any length must
// be shortened within the cap in linear time (libFuzzer's -timeout catches a slow one) without
// recursing per character (ASan catches the stack overflow that a regex gave).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "profile/kernel_names.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string name(reinterpret_cast<const char*>(data), size);
  const std::string demangled = sdpa::demangle(name);
  for (const std::size_t cap : {std::size_t{4}, std::size_t{80}}) {
    const std::string shortened = sdpa::shorten_kernel_name(demangled, cap);
    if (shortened.size() > cap) std::abort();  // the cap is what is kept
  }
  // Without a cap, shortening only removes: never a longer name.
  if (sdpa::shorten_kernel_name(demangled, std::string::npos).size() > demangled.size()) std::abort();
  sdpa::categorize_kernel(demangled);
  return 0;
}
