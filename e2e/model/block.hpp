#pragma once
// One transformer block's forward, input-gradient (B) and weight-gradient (W) passes, with their stash.
// Internal to the model (chunk.cpp drives it); tests reach it through Chunk.
//
//   n1 = norm1(x)          qkv = n1 Wqkv^T (+ bqkv)        [q, k rotated in place: RoPE]
//   atty = attention(qkv)  (unfused: saves the softmax; flash: saves the log-sum-exp)
//   res2 = x + atty Wattproj^T (+ battproj)                 n2 = norm2(res2)
//   fch = n2 Wfc^T (+ bfc) act = gelu(fch) or swiglu(fch)   out = res2 + act Wfcproj^T (+ bfcproj)
// norm is LayerNorm (GPT) or RMSNorm (Llama); the biases exist in the GPT layer only (gpt_config.hpp).
// Under TP the linears are sliced (tensor_parallel.hpp); "full" buffers hold all B*T rows, the others the rows
// this rank owns (all rows without sequence parallelism, where the full and local buffers are the same). Under
// context parallelism (context_parallel.hpp) every sequence contributes its Tl = T/cp rows on this rank, and the
// attention core runs over the CP ring (ring_attention.hpp) or Ulysses' all-to-alls (ulysses_attention.hpp).
#include "e2e/backend/backend.hpp"
#include "e2e/model/context_parallel.hpp"
#include "e2e/model/layout.hpp"
#include "e2e/model/tensor_parallel.hpp"
#include "e2e/model/ulysses_attention.hpp"

namespace zeropp::e2e {

struct BlockShape {
  int b = 1, T = 1, C = 1, NH = 1, F = 1;
  int t = 1;            // TP size
  bool sp = false;      // sequence parallel
  int KVH = 1;          // key/value heads (of the whole model)
  bool llama = false;   // RMSNorm + SwiGLU (else LayerNorm + GELU)
  int rotary_dims = 0;  // 0: learned positions (no RoPE)
  double rope_theta = 10000;
  bool flash = false;
  int cp = 1;                                           // context-parallel size
  Fp8Training fp8;                                      // FP8 linear layers (fp8.hpp)
  int Tl() const { return T / cp; }                     // rows per sequence on this rank
  int rows() const { return sp ? b * Tl() / t : b * Tl(); }  // local rows N
  int full_rows() const { return b * Tl(); }            // Nf
  int hs() const { return C / NH; }
  int Cl() const { return C / t; }
  int Fl() const { return F / t; }
  int NHl() const { return NH / t; }
  int KVHl() const { return KVH / t; }
  int Ql() const { return (NHl() + 2 * KVHl()) * hs(); }  // this rank's QKV columns
  int Ul() const { return llama ? 2 * Fl() : Fl(); }      // this rank's first-MLP-linear columns
};
// The shape of the blocks of `g` for micro-batch size b under `tp` and `cp`.
BlockShape block_shape(const GptConfig& g, int b, const TensorParallel& tp, const ContextParallel& cp = {});

// Views of one block's parameters (or gradients: same offsets) in a chunk's flat buffer; the views of parameters
// the layer does not have (biases and norm shifts of a Llama layer) are empty.
struct BlockTensors {
  Tensor ln1_w, ln1_b, qkv_w, qkv_b, attproj_w, attproj_b, ln2_w, ln2_b, fc_w, fc_b, fcproj_w, fcproj_b;
};
BlockTensors block_tensors(Tensor flat, const ChunkLayout&, int local_block);

// What a block keeps between its passes. F fills the forward part; B adds the gradients W needs and frees what
// only B needed; W frees the rest.
struct BlockStash {
  // forward
  Buffer x;                        // block input [N, C] (owned here; the previous block's output)
  Buffer ln1, ln1_mean, ln1_rstd;  // [N, C], [N], [N] (mean: LayerNorm only)
  Buffer ln1_full;                 // [Nf, C] (SP only: all-gathered ln1)
  Buffer qkv, att, lse, atty;      // [Nf, Ql], unfused [b, NHl, T, T] or flash/ring [b, NHl, Tl] (f32), [Nf, Cl]
  Buffer res2, ln2, ln2_mean, ln2_rstd, ln2_full;
  Buffer fch, fch_gelu;  // [Nf, Ul], [Nf, Fl]: the first MLP linear's output and its activation
  UlyssesStash ulysses;  // the head-split attention inputs and output (cp_kind ulysses)
  // backward (kept for W)
  Buffer dout;        // [Nf, C] gradient of the block output (all-gathered under SP)
  Buffer dres2_full;  // [Nf, C] gradient of res2 (all-gathered under SP)
  Buffer dfch, dqkv;  // [Nf, Ul], [Nf, Ql]
  Buffer dln1, dln2;  // [N, C]

  void free_forward_only();  // after B: what W does not need
  void clear();              // everything
};

class BlockRunner {
 public:
  BlockRunner(Backend& be, const BlockShape& s, const TensorParallel& tp, const ContextParallel& cp = {})
      : be_(be), s_(s), tp_(tp), cp_(cp) {}
  // x already in st.x; writes the block output into `out` [N, C].
  void forward(const BlockTensors& p, BlockStash& st, Tensor out);
  // dout [N, C] is taken over by the stash (W needs it); writes the input gradient into dx [N, C].
  void backward_input(const BlockTensors& p, BlockStash& st, Buffer dout, Tensor dx);
  // Accumulates into the gradient views g.
  void backward_weight(const BlockTensors& g, BlockStash& st);

 private:
  // SP: all-gather the local rows [N, cols] into `full` [Nf, cols] and return it; otherwise return `local`.
  Tensor gather_rows(Buffer& full, Tensor local, int cols);
  // out_local[N, OC] = the TP sum of inp_full[Nf, IC] @ w^T (+ bias, added once: on TP rank 0).
  void row_parallel_forward(Tensor out_local, Tensor inp_full, Tensor w, Tensor bias, int IC, int OC);
  // dinp_local[N, IC] = the TP sum of dout_full[Nf, OC] @ w (the column-parallel linear's input gradient).
  void column_parallel_backward(Tensor dinp_local, Tensor dout_full, Tensor w, int IC, int OC);
  void attention_forward(BlockStash& st);
  void attention_backward(BlockStash& st, Tensor datty);
  void rope(Tensor qkv, bool inverse);  // at each row's global position
  // FP8 (fp8.hpp): `x` [n] quantized and dequantized in format f with the whole tensor's amax (reduced over the TP
  // group) into `tmp`, whose view is returned; `x` itself without FP8.
  Tensor fp8_operand(Buffer& tmp, Tensor x, Fp8Format f);
  // The four weight GEMMs, in FP8 when the config asks for it: forward, input gradient, weight gradient (the bias
  // gradient from the unquantized dY, as TE's fused dbias and torchao's high-precision bias add).
  void linear_forward(Tensor out, Tensor inp, Tensor w, Tensor bias, int N, int IC, int OC);
  void linear_backward_input(Tensor dinp, Tensor dout, Tensor w, int N, int IC, int OC);
  void linear_backward_weight(Tensor dw, Tensor db, Tensor dout, Tensor inp, int N, int IC, int OC);

  Backend& be_;
  BlockShape s_;
  TensorParallel tp_;
  ContextParallel cp_;
};

// The norm of a GPT layer (LayerNorm: mean and rstd saved) or a Llama layer (RMSNorm: rstd only, mean empty), on
// N rows of C, shared by the blocks and the final norm of the head.
void norm_forward(Backend&, bool rms, Buffer& out, Buffer& mean, Buffer& rstd, Tensor x, Tensor w, Tensor b, int N,
                  int C);
void norm_backward_input(Backend&, bool rms, Tensor dinp, Tensor dout, Tensor x, Tensor mean, Tensor rstd, Tensor w,
                         int N, int C, bool accumulate);
void norm_backward_weight(Backend&, bool rms, Tensor dw, Tensor db, Tensor dout, Tensor x, Tensor mean, Tensor rstd,
                          int N, int C);

}  // namespace zeropp::e2e
