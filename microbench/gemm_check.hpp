#pragma once
// Spot check of a GEMM result against a float64 reference, shared by the CPU and CUDA suites: a few entries
// of C = op(A) * op(B) recomputed in double. Row-major storage; op(A) is m x k, op(B) is k x n.
#include <cstddef>
#include <vector>

#include "microbench/gemm_shapes.hpp"

namespace zeropp::microbench {

// Fills `v` with values uniform in [-1, 1) from a fixed-seed generator: never zeros (zeros hide unwritten
// outputs and wrong indexing), reproducible across ranks and runs.
void fill_uniform(std::vector<float>& v, unsigned seed);

// Largest |C[i][j] - ref| / sum_k |a_ik b_kj| over a fixed sample of entries: a scale-free error that fp32
// accumulation keeps near 1e-6 and bf16 operands with fp32 accumulation keep under ~1e-2.
// a and b are stored as the shape says (transposed operands stored transposed); c is m x n.
double gemm_sample_error(const GemmShape& g, const std::vector<float>& a, const std::vector<float>& b,
                         const std::vector<float>& c);

}  // namespace zeropp::microbench
