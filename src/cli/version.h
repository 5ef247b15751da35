#pragma once

namespace sdpa {

inline constexpr const char* kToolVersion = SDPA_VERSION;
extern const char* const kGitSha;  // written at build time by cmake/git_sha.cmake

}  // namespace sdpa
