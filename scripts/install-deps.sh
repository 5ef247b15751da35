#!/usr/bin/env bash
# Installs the Debian packages sdpa-prof builds and tests with (the CUDA toolkit must already be
# installed). clang and its runtimes (libFuzzer) build the fuzzers (tests/fuzz/); chromium renders
# the HTML report in the `browser` tests (ctest -L browser).
set -euo pipefail
packages=(cmake ninja-build g++ libcli11-dev libfmt-dev nlohmann-json3-dev libgtest-dev
          python3-matplotlib python3-yaml clang libclang-rt-dev chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: no nvcc found; install the CUDA toolkit (12.4 or newer) first" >&2
  exit 1
fi
