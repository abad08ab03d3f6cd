#!/usr/bin/env bash
# Configures (once) and builds with the default preset. Quick when already built.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
[ -f build/build.ninja ] || cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)"
