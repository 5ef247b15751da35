// Reading and writing files where others may have planted things: io/input_file.h and
// io/atomic_file.h.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "io/atomic_file.h"
#include "io/json_input.h"
#include "model/errors.h"

namespace fs = std::filesystem;

namespace sdpa {
namespace {

class SafeFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "sdpa-safe-files.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string at(const std::string& name) const { return (fs::path(dir_) / name).string(); }
  static std::string text_of(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::size_t entries() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator())); }
  std::string dir_;
};

TEST_F(SafeFiles, AFifoIsRefusedWithoutWaitingForAWriter) {
  ASSERT_EQ(::mkfifo(at("f").c_str(), 0600), 0);
  try {
    read_untrusted_text_file(at("f"));
    FAIL() << "a FIFO was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("it is a FIFO, not a regular file"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_untrusted_text_file(dir_), InputError);  // a directory
  EXPECT_THROW(read_untrusted_text_file("/dev/zero"), InputError);  // a device that never ends
}

TEST_F(SafeFiles, ALinkPlantedAtTheOldTemporaryNameIsNotFollowed) {
  { std::ofstream(at("victim")) << "precious"; }
  fs::create_symlink(at("victim"), at("out.html.tmp-" + std::to_string(::getpid())));
  write_file_atomically(at("out.html"), "page");
  EXPECT_EQ(text_of(at("victim")), "precious");
  EXPECT_EQ(text_of(at("out.html")), "page");
  EXPECT_EQ(entries(), 3u);  // victim, the planted link, out.html: no temporary left
}

TEST_F(SafeFiles, ALongLegalNameGetsAShortTemporary) {
  const std::string name = at(std::string(250, 'n'));
  check_writable(name);
  write_file_atomically(name, "x");
  EXPECT_EQ(text_of(name), "x");
  EXPECT_THROW(check_writable(at(std::string(256, 'n'))), InputError);
}

TEST_F(SafeFiles, AFifoNoOneReadsIsAnErrorNotAHangAndStaysAFifo) {
  ASSERT_EQ(::mkfifo(at("f").c_str(), 0600), 0);
  EXPECT_THROW(write_file_atomically(at("f"), "x"), InputError);
  struct stat st {};
  ASSERT_EQ(::stat(at("f").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_THROW(check_writable(dir_), InputError);  // a directory
}

TEST_F(SafeFiles, APipeIsWrittenInPlace) {  // --json /dev/stdout | jq
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  const std::string write_end = "/proc/self/fd/" + std::to_string(ends[1]);
  check_writable(write_end);
  write_file_atomically(write_end, "through the pipe");
  ::close(ends[1]);
  char got[64] = {};
  EXPECT_EQ(::read(ends[0], got, sizeof got), 16);
  EXPECT_STREQ(got, "through the pipe");
  ::close(ends[0]);
}

TEST_F(SafeFiles, ADeviceIsWrittenInPlaceAndAFullOneIsAnError) {
  write_file_atomically("/dev/null", "nothing");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_THROW(write_file_atomically("/dev/full", "lost"), InputError);
}

TEST_F(SafeFiles, OneFileHoweverSpelled) {
  { std::ofstream(at("in.json")) << "{}"; }
  fs::create_symlink(at("in.json"), at("link.json"));
  EXPECT_THROW(check_outputs({{"--html", at("link.json")}}, {at("in.json")}), InputError);
  EXPECT_THROW(check_outputs({{"--html", dir_ + "/./in.json"}}, {at("in.json")}), InputError);
  EXPECT_THROW(check_outputs({{"--json", at("x")}, {"--csv", dir_ + "/sub/../x"}}, {}), InputError);
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  EXPECT_THROW(check_outputs({{"--json", "y"}, {"--csv", "./y"}}, {}), InputError);
  EXPECT_THROW(check_outputs({{"--json", "y"}, {"--md", dir_ + "/y"}}, {}), InputError);
  fs::current_path(cwd);
  EXPECT_NO_THROW(check_outputs({{"--json", "/dev/null"}, {"--csv", "/dev/null"}}, {}));
  EXPECT_NO_THROW(check_outputs({{"--json", at("a")}, {"--csv", at("b")}}, {at("in.json")}));
}

TEST_F(SafeFiles, TemporariesAreRemovedOnASignal) {
  AtomicFileStream file(at("big.json"));
  file.stream() << "partial";
  EXPECT_EQ(entries(), 1u);  // the temporary
  remove_temporaries_from_signal_handler();
  EXPECT_EQ(entries(), 0u);
}

TEST_F(SafeFiles, AStreamDroppedWithoutCommitLeavesNothing) {
  { AtomicFileStream file(at("t.json")); file.stream() << "x"; }
  EXPECT_EQ(entries(), 0u);
  {
    AtomicFileStream file(at("t.json"));
    file.stream() << std::string(1 << 20, 'y');
    file.commit();
  }
  EXPECT_EQ(fs::file_size(at("t.json")), std::size_t{1} << 20);
  EXPECT_EQ(entries(), 1u);
}

}  // namespace
}  // namespace sdpa
