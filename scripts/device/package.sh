#!/usr/bin/env bash
# Builds the GPU run's binaries HERE and stages them, with the shared libraries a lent GPU machine lacks, in one
# folder that travels with the device tool's `carry` (docs/device.md says how to call it).
#
# Why build here and carry binaries, rather than build on the device:
#   - The device image has nvcc 13.0, CMake and ninja but none of the project's Debian dependencies (Eigen,
#     nlohmann-json, CLI11, fmt, Google Benchmark, GoogleTest, OpenMPI) and no network. Building there means
#     carrying their headers, libraries and CMake package files relocated to a new prefix, an MPI with its compiler
#     wrappers, and spending 2-4 of the 15 lent minutes compiling: each of those is a first-time failure that costs
#     a whole device call to find.
#   - Built here, every binary is the one this machine tested, and the rehearsal (scripts/device/rehearse.sh) runs
#     it with the Debian packages the device lacks hidden, so what can fail on the device is narrowed to the CUDA
#     libraries themselves, which the run script finds there at run time (toolkit and PyTorch's wheels).
#   - What this needs to hold: the device is x86-64 with a glibc and libstdc++ at least as new as this machine's
#     (Debian 12: glibc 2.36, GCC 12; the device's Python 3.12.3 is Ubuntu 24.04's, glibc 2.39, GCC 14). The run
#     script checks every binary with ldd first and falls back to the carried libstdc++/libgcc_s if the device's
#     are older. The CPU backend and Eigen GEMMs are built without -march=native (ZEROPP_E2E_NATIVE=OFF): the
#     device's CPU model is unknown. Device code is sm_90a SASS plus compute_90a PTX (H100 and H200).
#   - MPI: the trainer and zeropp-bench-cuda call MPI_Init even on one GPU. They run as MPI singletons (no mpirun,
#     OMPI_MCA_ess_singleton_isolated=1: no daemon is started), with this machine's Open MPI libraries, its
#     components (plugins that need network stacks the device lacks are left out) and help files carried.
#
# Usage: bash scripts/device/package.sh [--from-build DIR]
#   Without --from-build: configures and builds ${DEVICE_BUILD:-build-device} (Release, CUDA 90a, portable CPU code)
#   and stages into ${DEVICE_PKG:-.device} (both ignored by git). --from-build DIR stages from an existing build
#   instead (the CPU test does this with the default build; its binaries use the build machine's ISA).
# Prints the package's size and the exact device call.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${DEVICE_BUILD:-build-device}
pkg=${DEVICE_PKG:-.device}
from_build=""
if [ "${1:-}" = "--from-build" ]; then
  from_build=${2:?--from-build needs a build folder}
  build=$from_build
fi

# Targets: the programs the run uses, and every test executable that links the CUDA code (ctest lists the tests;
# the executables are whatever test_*cuda* / test_*nccl* targets exist, so kernels and tests added later travel
# without a change here).
if [ -z "$from_build" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZEROPP_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a \
    -DZEROPP_E2E_NATIVE=OFF >/dev/null
  grep -q 'ZEROPP_HAVE_CUDA' "$build/CMakeCache.txt" || true
  targets=$(ninja -C "$build" -t targets all |
    sed -n 's#^\(tests/[^:]*/\)\?\(test_[A-Za-z0-9_]*\(cuda\|nccl\)[A-Za-z0-9_]*\): .*#\2#p' | sort -u)
  cmake --build "$build" --target zeropp-train zeropp-bench-cuda zeropp-bench zeropp $targets -j "$(nproc)"
fi
if [ ! -x "$build/microbench/zeropp-bench-cuda" ]; then
  echo "package: $build has no zeropp-bench-cuda (CUDA off?)" >&2
  exit 2
fi
python3 scripts/device/package.py --build "$build" --out "$pkg"
