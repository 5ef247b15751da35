// Where --with-torch finds share/sdpa-prof/torch_sdpa.py: from an installed binary's bin folder,
// and from this build's folder in the source tree; anywhere else the error names the variable.
#include "trace/torch_paths.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "model/errors.h"

namespace fs = std::filesystem;
using namespace sdpa;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / fmt::format("sdpa-torch-paths-{}", getpid());
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST(TorchScript, FoundFromAnInstalledBinary) {
  const TempDir prefix;
  fs::create_directories(prefix.path / "bin");
  const fs::path installed = prefix.path / "share" / "sdpa-prof" / kTorchScriptName;
  fs::create_directories(installed.parent_path());
  std::ofstream(installed) << "\n";
  EXPECT_EQ(find_torch_script_from((prefix.path / "bin").string()),
            fs::canonical(installed).string());
}

TEST(TorchScript, FoundInTheSourceTreeFromTheBuildFolder) {
  EXPECT_EQ(
      find_torch_script_from(SDPA_TOOL_DIR),
      fs::canonical(fs::path(SDPA_SOURCE_DIR) / "share" / "sdpa-prof" / kTorchScriptName).string());
}

TEST(TorchScript, ElsewhereTheErrorNamesTheVariable) {
  const TempDir elsewhere;
  try {
    find_torch_script_from(elsewhere.path.string());
    FAIL() << "found a script in an empty folder";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("SDPA_PROF_TORCH_SCRIPT"), std::string::npos) << e.what();
  }
}
