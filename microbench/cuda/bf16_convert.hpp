#pragma once
// fp32 <-> bf16 conversions on the device (round to nearest even), for inputs drawn on the host and results
// checked on the host.
#include <cstddef>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace zeropp::microbench::cuda {

void float_to_bf16(const float* in, __nv_bfloat16* out, std::size_t n, cudaStream_t stream);
void bf16_to_float(const __nv_bfloat16* in, float* out, std::size_t n, cudaStream_t stream);
// Writes NaN everywhere: an output the GEMM fails to write stays NaN and fails the check.
void poison_bf16(__nv_bfloat16* out, std::size_t n, cudaStream_t stream);

}  // namespace zeropp::microbench::cuda
