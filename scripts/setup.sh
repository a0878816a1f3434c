#!/usr/bin/env bash
# Installs what pipeproof needs on a fresh Debian machine (as root), then configures and builds it.
# Idempotent: packages already present are not reinstalled.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake make libz3-dev z3 libboost-graph-dev libfmt-dev catch2 libcli11-dev nlohmann-json3-dev chromium chromium-driver python3 python3-jsonschema time cvc5 coinor-cbc)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

[ -n "${SKIP_BUILD:-}" ] && exit 0  # scripts/test.sh --sanitize builds elsewhere
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" "$@"
