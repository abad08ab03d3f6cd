#pragma once
// Pseudo-random bf16 values drawn on the device, uniform in [-1, 1): the GPU benchmarks' inputs. Drawing them on
// the host and uploading costs seconds per large GEMM operand (a Llama-3-70B MLP weight is 470 M values), which a
// lent GPU's minutes cannot afford; a counter-based hash (value i depends on seed and i only) gives the same
// values on every run, rank and GPU, and never zeros (zeros hide unwritten outputs and wrong indexing, and run
// faster than real data on some GPUs).
#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace zeropp::cuda_util {

// out[i] = bf16(uniform_hash(seed, i)), queued on `stream`.
void fill_uniform_bf16(__nv_bfloat16* out, std::size_t n, std::uint64_t seed, cudaStream_t stream);

// The value fill_uniform_bf16 writes at index i, as fp32 before rounding to bf16 (host and device share it, so a
// host test can check the kernel): the top 24 bits of a 64-bit mix of seed and i (SplitMix64's finaliser,
// Steele et al. 2014), scaled to (-1, 1). Never exactly zero: the value is an odd multiple of 2^-23.
__host__ __device__ inline float uniform_hash(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ULL + i + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  // (2u + 1) * 2^-23 - 1 = (2u + 1 - 2^23) * 2^-23 for u in [0, 2^23): an odd multiple of 2^-23 in (-1, 1).
  const auto u = static_cast<std::uint32_t>(z >> 41);
  return static_cast<float>(2u * u + 1u) * 0x1p-23f - 1.0f;
}

}  // namespace zeropp::cuda_util
