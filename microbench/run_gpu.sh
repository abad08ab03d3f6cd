#!/usr/bin/env bash
# The GPU check of issue 5 in one call (for a machine with a GPU and the CUDA toolkit): builds
# zeropp-bench-cuda, runs the cuBLASLt bf16 GEMMs (8192^3 and the GPT-3 1.3B / 13B layer shapes at 2048 tokens)
# on one GPU, then torch.matmul on the same shapes, and prints both side by side (goal: within 3%).
# Outputs go to ${OUT:-results/microbench}/gpu-*.json. Optional: NP=<ranks> also runs the NCCL collectives
# on NP GPUs of this node (1 KiB .. 1 GiB).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-results/microbench}
mkdir -p "$out"
build=${BUILD:-build}
[ -f "$build/build.ninja" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target zeropp-bench-cuda -j "$(nproc)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv || true
"$build/microbench/zeropp-bench-cuda" --zeropp_gemm_square=8192 --zeropp_gemm_hidden=2048,5120 \
  --zeropp_gemm_tokens=2048 --zeropp_gemm_seq= --zeropp_iterations=20 --benchmark_repetitions=5 \
  --benchmark_out="$out/gpu-gemm-cublaslt.json" --benchmark_out_format=json
python3 microbench/compare_torch.py --json "$out/gpu-gemm-torch.json" --compare "$out/gpu-gemm-cublaslt.json"
if [ -n "${NP:-}" ]; then
  mpirun -np "$NP" "$build/microbench/zeropp-bench-cuda" --zeropp_gemm_hidden= --zeropp_gemm_seq= \
    --zeropp_coll_max_bytes=1073741824 --zeropp_iterations=10 --benchmark_repetitions=3 \
    --benchmark_out="$out/gpu-collectives-nccl-np$NP.json" --benchmark_out_format=json
fi
