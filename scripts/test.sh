#!/usr/bin/env bash
# Builds and runs every test (unit, CLI, MPI end-to-end). Installs what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# OpenMPI refuses root and more ranks than cores unless told; tests launch with these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
ctest --preset default -j "$(nproc)"
