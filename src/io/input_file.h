// Opening a file that people or other processes named, without trusting what is there: only a
// regular file is opened. A FIFO would block open(2) forever, a device may never end, and a
// directory reads as nothing.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

namespace sdpa {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using InputFile = std::unique_ptr<std::FILE, FileCloser>;

// The open file, for reading; an InputError with a sentence ("cannot read X: it is a FIFO, not a
// regular file") when `path` is missing, unreadable or not a regular file. Never blocks.
InputFile open_regular_file(const std::string& path);

// What a file that is not a regular one is ("a directory", "a FIFO"), from its st_mode.
const char* file_kind(unsigned mode);

}  // namespace sdpa
