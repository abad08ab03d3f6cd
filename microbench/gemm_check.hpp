#pragma once
// Spot check of a GEMM result against a float64 reference, shared by the CPU and CUDA suites: a few entries
// of C = op(A) * op(B) recomputed in double. Row-major storage; op(A) is m x k, op(B) is k x n.
#include <cstddef>
#include <utility>
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

// The parts of that check, for operands that live elsewhere (the GPU suite gathers only the sampled rows of
// op(A) and columns of op(B)): the sampled entries (i, j), corners and a spread of interior entries so that edge
// tiles are covered; and one entry's error from row i of op(A), column j of op(B) (k values each) and the
// computed C[i][j] (INFINITY when it is not finite).
std::vector<std::pair<long, long>> gemm_sample_entries(const GemmShape& g);
double gemm_entry_error(const std::vector<double>& a_row, const std::vector<double>& b_col, double got);

}  // namespace zeropp::microbench
