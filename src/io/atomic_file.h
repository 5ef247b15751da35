// Files written whole or not at all: a temporary beside the target, renamed over it.
#pragma once

#include <string>

namespace sdpa {

// Throws InputError when `path` cannot be written (checked before a sweep starts).
void check_writable(const std::string& path);
// Writes `content` to `path` atomically; throws InputError on failure, leaving no partial file.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace sdpa
