#include "io/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "model/errors.h"

namespace sdpa {
namespace {

std::string temp_path_for(const std::string& path) {
  return fmt::format("{}.tmp-{}", path, static_cast<long>(::getpid()));
}

[[noreturn]] void fail(const std::string& path, const char* what) {
  throw InputError(fmt::format("cannot write {}: {}", path, what));
}

}  // namespace

void check_writable(const std::string& path) {
  if (std::filesystem::is_directory(path)) fail(path, "it is a directory");
  const std::string tmp = temp_path_for(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) fail(path, std::strerror(errno));
  std::fclose(f);
  std::remove(tmp.c_str());
}

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = temp_path_for(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) fail(path, std::strerror(errno));
  const bool written = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail(path, std::strerror(err));
  }
}

}  // namespace sdpa
