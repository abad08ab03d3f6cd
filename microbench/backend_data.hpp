#pragma once
// Benchmark inputs in a trainer backend's memory (e2e/backend/backend.hpp), whatever its dtype: the layer,
// optimizer and kernel suites run on the CPU backend (fp32) and on the CUDA backend (bf16 activations), so their
// inputs are drawn on the host in fp32 and converted by the backend itself.
#include <cstdint>

#include "e2e/backend/backend.hpp"

namespace zeropp::microbench {

// n elements of `dtype` uniform in [-1, 1) (fill_uniform's values, drawn for at most 2^20 elements and repeated:
// a memory-bound kernel's time does not depend on the values, and drawing a 1 G-element tensor on the host
// would cost seconds of a lent GPU's minutes).
e2e::Buffer random_buffer(e2e::Backend& backend, std::int64_t n, e2e::DType dtype, unsigned seed);

// n token ids (i32) in [0, vocab).
e2e::Buffer random_tokens(e2e::Backend& backend, std::int64_t n, int vocab, unsigned seed);

// Whether every element of `t` (f32 or bf16) is finite, read back through an fp32 copy.
bool all_finite(e2e::Backend& backend, e2e::Tensor t);

}  // namespace zeropp::microbench
