#!/usr/bin/env bash
# Set up, build, and run the main job on built-in examples.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --target pipeproof
build/pipeproof demo
