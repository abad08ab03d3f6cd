#!/usr/bin/env bash
# The main job on the embedded default: installs what is missing, builds, and runs the default study.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
./build/cost_model/zeropp compare --experiment default
echo
./build/cost_model/zeropp criterion --experiment default --cluster-time
