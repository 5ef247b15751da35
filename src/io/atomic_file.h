// Files written whole or not at all: a temporary beside the target, renamed over it.
#pragma once

#include <fstream>
#include <ostream>
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

// A file streamed out piece by piece, still atomic: written to a temporary beside `path`, which
// commit() renames over it; dropped without commit() (an error, an exception), nothing is left.
class AtomicFileStream {
 public:
  explicit AtomicFileStream(const std::string& path);  // throws InputError when it cannot be created
  ~AtomicFileStream();
  AtomicFileStream(const AtomicFileStream&) = delete;
  AtomicFileStream& operator=(const AtomicFileStream&) = delete;

  std::ostream& stream() { return file_; }
  void commit();  // throws InputError when a write failed or the rename does

 private:
  std::string given_, path_, tmp_;
  std::ofstream file_;
  bool committed_ = false;
};

}  // namespace sdpa
