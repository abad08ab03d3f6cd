#pragma once
// The GEMMs of one transformer layer, as the trainer runs them, with their forward (F), input-gradient (B) and
// weight-gradient (W) forms. Layouts are the trainer's (e2e/backend/cpu_backend.cpp, as llm.c and PyTorch's
// Linear): row-major activations X[T x in] with T = s*b tokens, weights W[out x in]. A linear layer gives
//   F: Y[T x out]  = X  * W^T   m = T,   n = out, k = in    (B operand transposed)
//   B: dX[T x in]  = dY * W     m = T,   n = in,  k = out
//   W: dW[out x in] = dY^T * X  m = out, n = in,  k = T     (A operand transposed)
// All three cost 2*T*in*out FLOPs; their shapes and transposes (and so, on a CPU, their efficiency: up to 1.7x
// apart here) differ, which is why the benchmark follows the trainer's layouts exactly.
#include <string>
#include <vector>

namespace zeropp::microbench {

enum class Pass { F, B, W };

// C[m x n] = op(A) * op(B); the transposes say which operand is read transposed (row-major storage).
struct GemmShape {
  std::string name;  // "qkv_F", "mlp_down_W", "square"
  long m = 0, n = 0, k = 0;
  bool transpose_a = false;
  bool transpose_b = false;

  double flop() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

// A linear layer's GEMM for one pass (see the table above).
GemmShape linear_gemm(const std::string& layer, long tokens, long in, long out, Pass pass);

// The four linear layers of a GPT block (QKV h->3h, attention output h->h, MLP up h->4h, MLP down 4h->h),
// each in its F, B and W form: 12 GEMMs.
std::vector<GemmShape> transformer_layer_gemms(long hidden, long tokens);

// The per-head attention GEMMs of one sequence (Megatron's unfused attention runs b*a of each):
// scores S = Q K^T (m = n = s, k = d) and context O = P V (m = s, n = d, k = s), d the head dimension.
// Their backward GEMMs have the same two shapes up to transposes.
std::vector<GemmShape> attention_gemms(long seq, long head_dim);

// n x n x n.
GemmShape square_gemm(long n);

}  // namespace zeropp::microbench
