#pragma once
// One transformer block's forward, input-gradient (B) and weight-gradient (W) passes, with their stash.
// Internal to the model (chunk.cpp drives it); tests reach it through Chunk.
//
//   ln1 = LN(x)            qkv = ln1 Wqkv^T + bqkv         atty = attention(qkv)
//   res2 = x + atty Wattproj^T + battproj                  ln2 = LN(res2)
//   fch = ln2 Wfc^T + bfc  out = res2 + gelu(fch) Wfcproj^T + bfcproj
// Under TP the linears are sliced (tensor_parallel.hpp); "full" buffers hold all B*T rows, the others the rows
// this rank owns (all rows without sequence parallelism, where the full and local buffers are the same).
#include "e2e/backend/backend.hpp"
#include "e2e/model/layout.hpp"
#include "e2e/model/tensor_parallel.hpp"

namespace zeropp::e2e {

struct BlockShape {
  int b = 1, T = 1, C = 1, NH = 1, F = 1;
  int t = 1;                                           // TP size
  bool sp = false;                                     // sequence parallel
  int rows() const { return sp ? b * T / t : b * T; }  // local rows N
  int full_rows() const { return b * T; }              // Nf
  int Cl() const { return C / t; }
  int Fl() const { return F / t; }
  int NHl() const { return NH / t; }
};

// Views of one block's parameters (or gradients: same offsets) in a chunk's flat buffer.
struct BlockTensors {
  Tensor ln1_w, ln1_b, qkv_w, qkv_b, attproj_w, attproj_b, ln2_w, ln2_b, fc_w, fc_b, fcproj_w, fcproj_b;
};
BlockTensors block_tensors(Tensor flat, const ChunkLayout&, int local_block);

// What a block keeps between its passes. F fills the forward part; B adds the gradients W needs and frees what
// only B needed; W frees the rest.
struct BlockStash {
  // forward
  Buffer x;                        // block input [N, C] (owned here; the previous block's output)
  Buffer ln1, ln1_mean, ln1_rstd;  // [N, C], [N], [N]
  Buffer ln1_full;                 // [Nf, C] (SP only: all-gathered ln1)
  Buffer qkv, att, atty;           // [Nf, 3Cl], [b, NHl, T, T], [Nf, Cl]
  Buffer res2, ln2, ln2_mean, ln2_rstd, ln2_full;
  Buffer fch, fch_gelu;  // [Nf, Fl]
  // backward (kept for W)
  Buffer dout;        // [Nf, C] gradient of the block output (all-gathered under SP)
  Buffer dres2_full;  // [Nf, C] gradient of res2 (all-gathered under SP)
  Buffer dfch, dqkv;  // [Nf, Fl], [Nf, 3Cl]
  Buffer dln1, dln2;  // [N, C]

  void free_forward_only();  // after B: what W does not need
  void clear();              // everything
};

class BlockRunner {
 public:
  BlockRunner(Backend& be, const BlockShape& s, const TensorParallel& tp) : be_(be), s_(s), tp_(tp) {}
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

  Backend& be_;
  BlockShape s_;
  TensorParallel tp_;
};

}  // namespace zeropp::e2e
