#!/usr/bin/env bash
# Re-measures the performance baseline (results/regression/perf-baseline.json) that CTest's regression.perf
# compares against: run it on an otherwise idle machine after an intended speed change, after adding or renaming
# a benchmark in cost_model/bench/, or after changing BM_ReferenceWorkload. Then update the machine, date and
# command in results/regression/README.md and commit both. The benchmark selection and settings are those of
# tests/regression/run_perf.cmake (the same file the test uses); the baseline takes 20 repetitions, the test 12.
#   bash scripts/update-perf-baseline.sh        # uses ./build (the default preset, Release)
#   BUILD_DIR=build-cpu bash scripts/update-perf-baseline.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
  [ "$build" = build ] || { echo "update-perf-baseline: $build is not configured" >&2; exit 2; }
  bash scripts/deps.sh
  cmake --preset default >/dev/null
fi
type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt")
[ "$type" = Release ] || { echo "update-perf-baseline: $build is a '$type' build; needs Release" >&2; exit 2; }
cmake --build "$build" --target zeropp-model-bench -j "$(nproc)"

mkdir -p results/regression
tmp=$(mktemp results/regression/.perf-baseline.XXXXXX)  # same filesystem: the final mv is a rename
trap 'rm -f "$tmp"' EXIT
cmake -DBENCH="$build/cost_model/zeropp-model-bench" -DOUT="$tmp" -DREPETITIONS=20 -P tests/regression/run_perf.cmake
mv -f "$tmp" results/regression/perf-baseline.json
echo "update-perf-baseline: wrote results/regression/perf-baseline.json; update results/regression/README.md"
