// Files written whole or not at all: a temporary beside the target, renamed over it.
#pragma once

#include <string>
#include <vector>

namespace sdpa {

// An output file named on the command line.
struct OutputPath {
  std::string flag;  // "--json"
  std::string path;  // empty: not asked for
};

// Before any work: each output is writable, no two outputs are one file, and no output would
// overwrite one of `inputs` (a preset, a result being compared). Throws InputError.
void check_outputs(const std::vector<OutputPath>& outputs, const std::vector<std::string>& inputs);

// Throws InputError when `path` cannot be written (checked before a sweep starts).
void check_writable(const std::string& path);
// Writes `content` to `path` atomically; throws InputError on failure, leaving no partial file.
// When `path` is a symbolic link, the file it points to is replaced, not the link.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace sdpa
