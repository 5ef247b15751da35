// Files written whole or not at all: a temporary of our own beside the target, renamed over it.
// The temporary has a random short name and is created exclusively, never through a link, so a
// name planted in a shared folder cannot redirect the write; a target that is a device or a FIFO
// (/dev/null, /dev/stdout) is written in place and never replaced; temporaries are removed on the
// signals the tool handles.
#pragma once

#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace sdpa {

// An output file named on the command line.
struct OutputPath {
  std::string flag;  // "--json"
  std::string path;  // empty: not asked for
};

// Before any work: each output is writable, no two outputs are one file, and no output would
// overwrite one of `inputs` (a preset, a result being read), however each is spelled (x, ./x,
// $PWD/x, a link or a hard link to it). Throws InputError.
void check_outputs(const std::vector<OutputPath>& outputs, const std::vector<std::string>& inputs);

// Throws InputError when `path` cannot be written (checked before a sweep starts): its folder is
// not writable, its name is too long, or it is a directory, a socket or a block device.
void check_writable(const std::string& path);
// Whether write_file_atomically writes `path` in place (a character device or a FIFO:
// /dev/null, /dev/stdout on a pipe) instead of replacing it whole. Throws InputError for a target
// it would refuse (a directory, a socket).
bool written_in_place(const std::string& path);
// Writes `content` to `path` atomically; throws InputError on failure, leaving no partial file.
// When `path` is a symbolic link, the file it points to is replaced, not the link.
void write_file_atomically(const std::string& path, const std::string& content);

// Removes every temporary not yet renamed; only async-signal-safe calls (for a signal handler).
void remove_temporaries_from_signal_handler();

// Writes to a file descriptor, remembering whether any write failed.
class FdStreamBuf : public std::streambuf {
 public:
  FdStreamBuf() { setp(buffer_, buffer_ + sizeof buffer_); }
  void attach(int fd) { fd_ = fd; }
  bool failed() const { return failed_; }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override;
  int sync() override;

 private:
  bool flush_buffer();
  int fd_ = -1;
  bool failed_ = false;
  int error_ = 0;
  char buffer_[1 << 16];
};

// A file streamed out piece by piece, still atomic: written to a temporary beside `path`, which
// commit() renames over it; dropped without commit() (an error, an exception), nothing is left.
class AtomicFileStream {
 public:
  explicit AtomicFileStream(const std::string& path);  // throws InputError when it cannot be created
  ~AtomicFileStream();
  AtomicFileStream(const AtomicFileStream&) = delete;
  AtomicFileStream& operator=(const AtomicFileStream&) = delete;

  std::ostream& stream() { return stream_; }
  void commit();  // throws InputError when a write failed or the rename does

 private:
  std::string given_, path_, tmp_;  // tmp_ empty: written in place (a device, a FIFO)
  int fd_ = -1;
  int slot_ = -1;  // in the table of temporaries removed on a signal
  FdStreamBuf buffer_;
  std::ostream stream_;
  bool done_ = false;
};

}  // namespace sdpa
