#!/usr/bin/env bash
# device.rehearsal_lite: stage a package from BUILD, run scripts/device/run.sh's env, tests and loss steps on this
# GPU-less machine, and check what comes back (tests/device/check_run.py). Usage: rehearsal_lite.sh BUILD DIR
set -euo pipefail
build=$1 dir=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$dir" && mkdir -p "$dir"
python3 "$src/scripts/device/package.py" --build "$build" --out "$dir/pkg"
DEVICE_PKG="$dir/pkg" OUT="$dir/out" WORK="$dir/work" STEPS=env,tests,loss TRACK_STEPS=5 DEADLINE_S=180 \
  bash "$src/scripts/device/run.sh" || true
python3 "$src/tests/device/check_run.py" "$dir/out" "$dir/pkg"
