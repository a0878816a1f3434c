#!/usr/bin/env bash
# Set up, build everything, and run all tests (ctest).
#   scripts/test.sh              Release build in build/
#   scripts/test.sh --sanitize   the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer in
#                                build-sanitize/ (any report fails the test that triggered it)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--sanitize" ]; then
  SKIP_BUILD=1 scripts/setup.sh  # packages only
  flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
  cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
  cmake --build build-sanitize -j"$(nproc)"
  # Known reports that belong to another part of the work are listed, one per line with the reason, in
  # scripts/ubsan.supp (empty when there are none).
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$PWD/scripts/ubsan.supp"
  export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:check_initialization_order=1"
  cd build-sanitize
  ctest --output-on-failure -j"$(nproc)" --timeout 1500
  exit
fi
scripts/setup.sh
cd build
ctest --output-on-failure -j"$(nproc)"
