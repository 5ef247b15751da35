#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "io/input_file.h"
#include "model/errors.h"

namespace fs = std::filesystem;

namespace sdpa {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw InputError(fmt::format("cannot write {}: {}", path, what));
}

// Temporaries not yet renamed, for a signal handler to remove: fixed storage, no allocation.
constexpr int kTemporarySlots = 16;
struct TemporarySlot {
  std::atomic<bool> used{false};
  char path[PATH_MAX] = {};
};
TemporarySlot g_temporaries[kTemporarySlots];

int remember_temporary(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kTemporarySlots; ++i) {
    bool expected = false;
    if (g_temporaries[i].used.load() || !g_temporaries[i].used.compare_exchange_strong(expected, true)) continue;
    std::memcpy(g_temporaries[i].path, path.c_str(), path.size() + 1);
    return i;
  }
  return -1;  // more at once than ever happens: that one is not removed on a signal
}

void forget_temporary(int slot) {
  if (slot >= 0) g_temporaries[slot].used.store(false);
}

// Where a write to `given` lands: the file a symbolic link points to, followed here once so that
// the checks below see the real target.
std::string write_target(const std::string& given) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(given, ec))) return given;
  const fs::path target = fs::weakly_canonical(given, ec);
  if (ec) fail(given, ec.message());
  return target.string();
}

enum class TargetKind { regular_or_new, device, fifo };

// A regular file (or none yet) is replaced; a character device (/dev/null, a terminal) or a FIFO
// (/dev/stdout on a pipe) is written in place; anything else is refused, never replaced. The
// kernel follows the links here (/dev/stdout -> /proc/self/fd/1 -> a pipe).
TargetKind target_kind(const std::string& given) {
  struct stat st {};
  if (::stat(given.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return TargetKind::regular_or_new;
  if (S_ISCHR(st.st_mode)) return TargetKind::device;
  if (S_ISFIFO(st.st_mode)) return TargetKind::fifo;
  fail(given, fmt::format("it is {}; name a regular file", file_kind(st.st_mode)));
}

// Opens a device or FIFO to write in place; a FIFO no process reads is an error, not a hang.
int open_in_place(const std::string& given) {
  const int fd = ::open(given.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) fail(given, errno == ENXIO ? std::string("it is a FIFO that no process reads") : std::strerror(errno));
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// The target's folder and a name short enough beside any legal file name.
std::string folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

void check_name_length(const std::string& given, const std::string& path) {
  if (fs::path(path).filename().string().size() > NAME_MAX) fail(given, std::strerror(ENAMETOOLONG));
}

// Creates a temporary of a random name in `folder`: exclusively, never through a link.
int create_temporary(const std::string& given, const std::string& folder, std::string& tmp) {
  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (int attempt = 0; attempt < 100; ++attempt) {
    unsigned char random[10];
    if (::getrandom(random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) fail(given, std::strerror(errno));
    std::string name = ".sdpa-prof-";
    for (const unsigned char r : random) name.push_back(kLetters[r % (sizeof kLetters - 1)]);
    tmp = folder + "/" + name;
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST) fail(given, std::strerror(errno));
  }
  fail(given, "no free name for a temporary in its folder");
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// One spelling per file: its device and inode when it exists, else its absolute path with every
// link and "." resolved.
std::string identity_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return fmt::format("inode {}:{}", st.st_dev, st.st_ino);
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return "path " + (ec ? path : p.string());
}

bool is_device(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

}  // namespace

bool written_in_place(const std::string& path) { return target_kind(path) != TargetKind::regular_or_new; }

void remove_temporaries_from_signal_handler() {
  for (TemporarySlot& t : g_temporaries)
    if (t.used.load()) ::unlink(t.path);
}

void check_writable(const std::string& given) {
  const TargetKind kind = target_kind(given);
  if (kind == TargetKind::device) ::close(open_in_place(given));
  if (kind != TargetKind::regular_or_new) return;  // a FIFO opened and closed here would end its reader's input
  const std::string path = write_target(given);
  check_name_length(given, path);
  std::string tmp;
  const int fd = create_temporary(given, folder_of(path), tmp);
  ::close(fd);
  ::unlink(tmp.c_str());
}

void check_outputs(const std::vector<OutputPath>& outputs, const std::vector<std::string>& inputs) {
  std::vector<std::pair<std::string, const OutputPath*>> seen;
  for (const OutputPath& o : outputs) {
    if (o.path.empty()) continue;
    check_writable(o.path);
    if (is_device(o.path)) continue;  // /dev/null twice is fine
    const std::string id = identity_of(o.path);
    for (const std::string& input : inputs)
      if (!input.empty() && identity_of(input) == id)
        throw InputError(fmt::format("{} {} would overwrite an input ({})", o.flag, o.path, input));
    for (const auto& [other_id, other] : seen)
      if (other_id == id) throw InputError(fmt::format("{} and {} name the same file {}", other->flag, o.flag, o.path));
    seen.emplace_back(id, &o);
  }
}

void write_file_atomically(const std::string& path, const std::string& content) {
  AtomicFileStream file(path);
  file.stream().write(content.data(), static_cast<std::streamsize>(content.size()));
  file.commit();
}

bool FdStreamBuf::flush_buffer() {
  const std::size_t size = static_cast<std::size_t>(pptr() - pbase());
  if (!failed_ && size > 0 && !write_all(fd_, pbase(), size)) {
    failed_ = true;
    error_ = errno != 0 ? errno : EIO;
  }
  setp(buffer_, buffer_ + sizeof buffer_);
  return !failed_;
}

FdStreamBuf::int_type FdStreamBuf::overflow(int_type c) {
  if (!flush_buffer()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

int FdStreamBuf::sync() { return flush_buffer() ? 0 : -1; }

AtomicFileStream::AtomicFileStream(const std::string& given) : given_(given), path_(given), stream_(&buffer_) {
  if (target_kind(given_) != TargetKind::regular_or_new) {
    fd_ = open_in_place(given_);
  } else {
    path_ = write_target(given_);
    check_name_length(given_, path_);
    fd_ = create_temporary(given_, folder_of(path_), tmp_);
    slot_ = remember_temporary(tmp_);
  }
  buffer_.attach(fd_);
}

AtomicFileStream::~AtomicFileStream() {
  if (done_) return;
  ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  forget_temporary(slot_);
}

void AtomicFileStream::commit() {
  stream_.flush();
  done_ = true;
  int err = buffer_.failed() ? buffer_.error() : 0;
  if (::close(fd_) != 0 && err == 0) err = errno;
  if (err == 0 && !tmp_.empty() && ::rename(tmp_.c_str(), path_.c_str()) != 0) err = errno;
  if (err != 0 && !tmp_.empty()) ::unlink(tmp_.c_str());
  forget_temporary(slot_);
  if (err != 0) fail(given_, std::strerror(err));
}

}  // namespace sdpa
