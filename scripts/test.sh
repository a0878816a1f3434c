#!/usr/bin/env bash
# Set up, build everything, and run all tests (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cd build
ctest --output-on-failure -j"$(nproc)"
