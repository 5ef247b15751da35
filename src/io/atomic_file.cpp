#include "io/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "model/errors.h"

namespace sdpa {
namespace {

// The file a write to `path` lands in: the link's target when `path` is a symbolic link.
std::string write_target(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec))) return path;
  const std::filesystem::path target = std::filesystem::weakly_canonical(path, ec);
  if (ec) throw InputError(fmt::format("cannot write {}: {}", path, ec.message()));
  return target.string();
}

// One spelling per file, to tell whether two names are the same file.
std::string identity_of(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

std::string temp_path_for(const std::string& path) {
  return fmt::format("{}.tmp-{}", path, static_cast<long>(::getpid()));
}

[[noreturn]] void fail(const std::string& path, const char* what) {
  throw InputError(fmt::format("cannot write {}: {}", path, what));
}

}  // namespace

void check_writable(const std::string& given) {
  const std::string path = write_target(given);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(given, "it is a directory");
  const std::string tmp = temp_path_for(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) fail(given, std::strerror(errno));
  std::fclose(f);
  std::remove(tmp.c_str());
}

void check_outputs(const std::vector<OutputPath>& outputs, const std::vector<std::string>& inputs) {
  std::vector<std::pair<std::string, const OutputPath*>> seen;
  for (const OutputPath& o : outputs) {
    if (o.path.empty()) continue;
    const std::string id = identity_of(o.path);
    for (const std::string& input : inputs)
      if (identity_of(input) == id) throw InputError(fmt::format("{} {} would overwrite an input", o.flag, o.path));
    for (const auto& [other_id, other] : seen)
      if (other_id == id) throw InputError(fmt::format("{} and {} name the same file {}", other->flag, o.flag, o.path));
    seen.emplace_back(id, &o);
    check_writable(o.path);
  }
}

void write_file_atomically(const std::string& given, const std::string& content) {
  const std::string path = write_target(given);
  const std::string tmp = temp_path_for(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) fail(given, std::strerror(errno));
  const bool written = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail(given, std::strerror(err));
  }
}

AtomicFileStream::AtomicFileStream(const std::string& given)
    : given_(given), path_(write_target(given)), tmp_(temp_path_for(path_)) {
  file_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!file_) fail(given_, std::strerror(errno));
}

AtomicFileStream::~AtomicFileStream() {
  if (committed_) return;
  file_.close();
  std::remove(tmp_.c_str());
}

void AtomicFileStream::commit() {
  file_.flush();
  const bool written = static_cast<bool>(file_);
  file_.close();
  if (!written || file_.fail() || std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp_.c_str());
    committed_ = true;  // nothing left to remove
    fail(given_, err != 0 ? std::strerror(err) : "the write failed");
  }
  committed_ = true;
}

}  // namespace sdpa
