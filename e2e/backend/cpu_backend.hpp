#pragma once
// The CPU backend: fp32 everywhere, GEMMs through Eigen (its own cache blocking and vector kernels), the other
// operations as plain loops in the order llm.c computes them. Deterministic: every reduction runs in a fixed
// order, so the same inputs give bit-identical outputs on every call and every rank.
#include <vector>

#include "e2e/backend/backend.hpp"

namespace zeropp::e2e {

class CpuBackend final : public Backend {
 public:
  // threads: Eigen's GEMM threads. One MPI rank per core wants 1 (the default).
  explicit CpuBackend(int threads = 1);

  std::string_view name() const override { return "cpu"; }
  DType compute_dtype() const override { return DType::f32; }

  void copy_from_host(Tensor dst, const void* src) override;
  void copy_to_host(void* dst, Tensor src) override;
  void synchronize() override {}

  void gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, Tensor A, int lda, Tensor B, int ldb,
            float beta, Tensor C, int ldc) override;
  void linear_forward(Tensor out, Tensor inp, Tensor weight, Tensor bias, int N, int IC, int OC) override;
  void linear_backward_input(Tensor dinp, Tensor dout, Tensor weight, int N, int IC, int OC, bool accumulate) override;
  void linear_backward_weight(Tensor dweight, Tensor dbias, Tensor dout, Tensor inp, int N, int IC, int OC) override;

  void layernorm_forward(Tensor out, Tensor mean, Tensor rstd, Tensor inp, Tensor weight, Tensor bias, int N,
                         int C) override;
  void layernorm_backward_input(Tensor dinp, Tensor dout, Tensor inp, Tensor mean, Tensor rstd, Tensor weight, int N,
                                int C, bool accumulate) override;
  void layernorm_backward_weight(Tensor dweight, Tensor dbias, Tensor dout, Tensor inp, Tensor mean, Tensor rstd, int N,
                                 int C) override;

  void rmsnorm_forward(Tensor out, Tensor rstd, Tensor inp, Tensor weight, int N, int C) override;
  void rmsnorm_backward_input(Tensor dinp, Tensor dout, Tensor inp, Tensor rstd, Tensor weight, int N, int C,
                              bool accumulate) override;
  void rmsnorm_backward_weight(Tensor dweight, Tensor dout, Tensor inp, Tensor rstd, int N, int C) override;

  void swiglu_forward(Tensor out, Tensor inp, int N, int F) override;
  void swiglu_backward(Tensor dinp, Tensor inp, Tensor dout, int N, int F) override;

  void rope(Tensor qkv, int N, int T, int NH, int KVH, int hs, int rotary_dims, double theta, bool inverse,
            int pos0) override;

  void gelu_forward(Tensor out, Tensor inp, std::int64_t n) override;
  void gelu_backward(Tensor dinp, Tensor inp, Tensor dout, std::int64_t n) override;

  void grouped_attention_forward(Tensor out, Tensor att, Tensor qkv, int B, int T, int NH, int KVH, int hs) override;
  void grouped_attention_backward(Tensor dqkv, Tensor dout, Tensor qkv, Tensor att, int B, int T, int NH, int KVH,
                                  int hs) override;
  // Tiles of kFlashRows queries x kFlashCols keys; scratch O(tile + T) per call, counted by the allocator.
  void flash_attention_forward(Tensor out, Tensor lse, Tensor qkv, int B, int T, int NH, int KVH, int hs) override;
  void attention_block_forward(Tensor out, Tensor lse, Tensor q, Tensor kv, int B, int Tl, int NH, int KVH, int hs,
                               const AttentionBlock& blk, bool merge) override;
  void attention_block_backward(Tensor dq, Tensor dkv, Tensor dout, Tensor out, Tensor lse, Tensor q, Tensor kv, int B,
                                int Tl, int NH, int KVH, int hs, const AttentionBlock& blk) override;
  void flash_attention_backward(Tensor dqkv, Tensor dout, Tensor out, Tensor lse, Tensor qkv, int B, int T, int NH,
                                int KVH, int hs) override;

  void embedding_forward(Tensor out, Tensor tokens, Tensor wte, Tensor wpe, int N, int T, int C, int row0) override;
  void embedding_backward_weight(Tensor dwte, Tensor dwpe, Tensor dout, Tensor tokens, int N, int T, int C,
                                 int row0) override;

  void crossentropy_forward(Tensor losses, Tensor probs, Tensor logits, Tensor targets, int N, int V) override;
  void crossentropy_backward(Tensor dlogits, Tensor probs, Tensor targets, int N, int V, float scale) override;

  void add(Tensor out, Tensor a, Tensor b, std::int64_t n) override;
  void accumulate(Tensor y, Tensor x, std::int64_t n) override;
  void scale(Tensor x, float s, std::int64_t n) override;
  void copy(Tensor dst, Tensor src, std::int64_t n) override;
  void fill_zero(Tensor x) override;
  double sum_squares(Tensor x) override;
  double sum(Tensor x) override;

  void adamw_update(Tensor params, Tensor grads, Tensor m, Tensor v, std::int64_t n, const AdamWArgs& args) override;

 private:
  // cos and sin of every (position, pair) angle of the last rope() shape, computed in double once.
  struct RopeTable {
    int T = 0, rotary_dims = 0;
    double theta = 0;
    std::vector<float> cos, sin;  // [T, rotary_dims / 2]
  };
  const RopeTable& rope_table(int T, int rotary_dims, double theta);
  RopeTable rope_table_;

  void* raw_allocate(std::size_t bytes) override;
  void raw_deallocate(void* p) noexcept override;
};

}  // namespace zeropp::e2e
