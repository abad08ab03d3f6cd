#include "e2e/model/block.hpp"

#include <stdexcept>
#include <utility>

namespace zeropp::e2e {

BlockTensors block_tensors(Tensor flat, const ChunkLayout& layout, int local_block) {
  const int layer = layout.spec().first_block + local_block;
  auto v = [&](ParamKind k) {
    const ParamSegment& s = layout.segment(k, layer);
    return flat.slice(s.offset, s.numel);
  };
  return {v(ParamKind::ln1_w),     v(ParamKind::ln1_b),     v(ParamKind::qkv_w),    v(ParamKind::qkv_b),
          v(ParamKind::attproj_w), v(ParamKind::attproj_b), v(ParamKind::ln2_w),    v(ParamKind::ln2_b),
          v(ParamKind::fc_w),      v(ParamKind::fc_b),      v(ParamKind::fcproj_w), v(ParamKind::fcproj_b)};
}

void BlockStash::free_forward_only() {
  qkv.reset();
  att.reset();
  fch.reset();
  // Under SP, W reads the gathered LN outputs; the local ones were only the gathers' sources.
  if (!ln1_full.empty()) ln1.reset();
  if (!ln2_full.empty()) ln2.reset();
}

void BlockStash::clear() { *this = BlockStash{}; }

Tensor BlockRunner::gather_rows(Buffer& full, Tensor local, int cols) {
  if (!s_.sp || s_.t == 1) return local;
  full = Buffer(be_, std::int64_t{s_.full_rows()} * cols, local.dtype);
  tp_.comm->all_gather(full.view(), local, std::int64_t{s_.rows()} * cols);
  return full.view();
}

void BlockRunner::row_parallel_forward(Tensor out_local, Tensor inp_full, Tensor w, Tensor bias, int IC, int OC) {
  const int Nf = s_.full_rows();
  if (s_.t == 1) {
    be_.linear_forward(out_local, inp_full, w, bias, Nf, IC, OC);
    return;
  }
  // The replicated bias enters the sum once, on TP rank 0 (Megatron adds it after the reduction; same sum).
  const Tensor b = tp_.rank == 0 ? bias : Tensor{};
  if (!s_.sp) {
    be_.linear_forward(out_local, inp_full, w, b, Nf, IC, OC);
    tp_.comm->all_reduce_sum(out_local, std::int64_t{Nf} * OC);
    return;
  }
  Buffer partial(be_, std::int64_t{Nf} * OC, out_local.dtype);
  be_.linear_forward(partial.view(), inp_full, w, b, Nf, IC, OC);
  tp_.comm->reduce_scatter_sum(out_local, partial.view(), std::int64_t{s_.rows()} * OC);
}

void BlockRunner::column_parallel_backward(Tensor dinp_local, Tensor dout_full, Tensor w, int IC, int OC) {
  const int Nf = s_.full_rows();
  if (s_.t == 1 || !s_.sp) {
    be_.linear_backward_input(dinp_local, dout_full, w, Nf, IC, OC, false);
    if (s_.t > 1) tp_.comm->all_reduce_sum(dinp_local, std::int64_t{Nf} * IC);
    return;
  }
  Buffer partial(be_, std::int64_t{Nf} * IC, dinp_local.dtype);
  be_.linear_backward_input(partial.view(), dout_full, w, Nf, IC, OC, false);
  tp_.comm->reduce_scatter_sum(dinp_local, partial.view(), std::int64_t{s_.rows()} * IC);
}

void BlockRunner::forward(const BlockTensors& p, BlockStash& st, Tensor out) {
  const int N = s_.rows(), Nf = s_.full_rows(), C = s_.C, Cl = s_.Cl(), Fl = s_.Fl();
  const DType dt = be_.compute_dtype();
  const std::int64_t nc = std::int64_t{N} * C;
  // attention half
  st.ln1 = Buffer(be_, nc, dt);
  st.ln1_mean = Buffer(be_, N);
  st.ln1_rstd = Buffer(be_, N);
  be_.layernorm_forward(st.ln1.view(), st.ln1_mean.view(), st.ln1_rstd.view(), st.x.view(), p.ln1_w, p.ln1_b, N, C);
  const Tensor ln1f = gather_rows(st.ln1_full, st.ln1.view(), C);
  st.qkv = Buffer(be_, std::int64_t{Nf} * 3 * Cl, dt);
  be_.linear_forward(st.qkv.view(), ln1f, p.qkv_w, p.qkv_b, Nf, C, 3 * Cl);
  st.att = Buffer(be_, std::int64_t{s_.b} * s_.NHl() * s_.T * s_.T, dt);
  st.atty = Buffer(be_, std::int64_t{Nf} * Cl, dt);
  be_.attention_forward(st.atty.view(), st.att.view(), st.qkv.view(), s_.b, s_.T, Cl, s_.NHl());
  st.res2 = Buffer(be_, nc, dt);
  row_parallel_forward(st.res2.view(), st.atty.view(), p.attproj_w, p.attproj_b, Cl, C);
  be_.add(st.res2.view(), st.x.view(), st.res2.view(), nc);
  // MLP half
  st.ln2 = Buffer(be_, nc, dt);
  st.ln2_mean = Buffer(be_, N);
  st.ln2_rstd = Buffer(be_, N);
  be_.layernorm_forward(st.ln2.view(), st.ln2_mean.view(), st.ln2_rstd.view(), st.res2.view(), p.ln2_w, p.ln2_b, N, C);
  const Tensor ln2f = gather_rows(st.ln2_full, st.ln2.view(), C);
  st.fch = Buffer(be_, std::int64_t{Nf} * Fl, dt);
  be_.linear_forward(st.fch.view(), ln2f, p.fc_w, p.fc_b, Nf, C, Fl);
  st.fch_gelu = Buffer(be_, std::int64_t{Nf} * Fl, dt);
  be_.gelu_forward(st.fch_gelu.view(), st.fch.view(), std::int64_t{Nf} * Fl);
  row_parallel_forward(out, st.fch_gelu.view(), p.fcproj_w, p.fcproj_b, Fl, C);
  be_.add(out, st.res2.view(), out, nc);
}

void BlockRunner::backward_input(const BlockTensors& p, BlockStash& st, Buffer dout, Tensor dx) {
  const int N = s_.rows(), Nf = s_.full_rows(), C = s_.C, Cl = s_.Cl(), Fl = s_.Fl();
  const DType dt = be_.compute_dtype();
  const std::int64_t nc = std::int64_t{N} * C;
  if (st.att.empty()) throw std::logic_error("block backward_input without a forward stash");
  // MLP half: out = res2 + gelu(fch) Wfcproj^T, so dres2 = dout + LN2's input gradient.
  Buffer dres2(be_, nc, dt);
  be_.copy(dres2.view(), dout.view(), nc);
  if (s_.sp && s_.t > 1) {
    gather_rows(st.dout, dout.view(), C);
  } else {
    st.dout = std::move(dout);
  }
  Buffer dfch_gelu(be_, std::int64_t{Nf} * Fl, dt);
  be_.linear_backward_input(dfch_gelu.view(), st.dout.view(), p.fcproj_w, Nf, Fl, C, false);
  st.dfch = Buffer(be_, std::int64_t{Nf} * Fl, dt);
  be_.gelu_backward(st.dfch.view(), st.fch.view(), dfch_gelu.view(), std::int64_t{Nf} * Fl);
  dfch_gelu.reset();
  st.dln2 = Buffer(be_, nc, dt);
  column_parallel_backward(st.dln2.view(), st.dfch.view(), p.fc_w, C, Fl);
  be_.layernorm_backward_input(dres2.view(), st.dln2.view(), st.res2.view(), st.ln2_mean.view(), st.ln2_rstd.view(),
                               p.ln2_w, N, C, true);
  // Attention half: res2 = x + attention(...), so dx = dres2 + LN1's input gradient.
  Tensor dres2_local = dres2.view();
  if (s_.sp && s_.t > 1) {
    gather_rows(st.dres2_full, dres2_local, C);
  } else {
    st.dres2_full = std::move(dres2);
    dres2_local = st.dres2_full.view();
  }
  Buffer datty(be_, std::int64_t{Nf} * Cl, dt);
  be_.linear_backward_input(datty.view(), st.dres2_full.view(), p.attproj_w, Nf, Cl, C, false);
  st.dqkv = Buffer(be_, std::int64_t{Nf} * 3 * Cl, dt);
  be_.attention_backward(st.dqkv.view(), datty.view(), st.qkv.view(), st.att.view(), s_.b, s_.T, Cl, s_.NHl());
  datty.reset();
  st.dln1 = Buffer(be_, nc, dt);
  column_parallel_backward(st.dln1.view(), st.dqkv.view(), p.qkv_w, C, 3 * Cl);
  be_.copy(dx, dres2_local, nc);
  be_.layernorm_backward_input(dx, st.dln1.view(), st.x.view(), st.ln1_mean.view(), st.ln1_rstd.view(), p.ln1_w, N, C,
                               true);
  st.free_forward_only();
}

void BlockRunner::backward_weight(const BlockTensors& g, BlockStash& st) {
  const int N = s_.rows(), Nf = s_.full_rows(), C = s_.C, Cl = s_.Cl(), Fl = s_.Fl();
  if (st.dqkv.empty()) throw std::logic_error("block backward_weight before backward_input");
  const Tensor ln1f = st.ln1_full.empty() ? st.ln1.view() : st.ln1_full.view();
  const Tensor ln2f = st.ln2_full.empty() ? st.ln2.view() : st.ln2_full.view();
  be_.linear_backward_weight(g.fcproj_w, g.fcproj_b, st.dout.view(), st.fch_gelu.view(), Nf, Fl, C);
  be_.linear_backward_weight(g.fc_w, g.fc_b, st.dfch.view(), ln2f, Nf, C, Fl);
  be_.linear_backward_weight(g.attproj_w, g.attproj_b, st.dres2_full.view(), st.atty.view(), Nf, Cl, C);
  be_.linear_backward_weight(g.qkv_w, g.qkv_b, st.dqkv.view(), ln1f, Nf, C, 3 * Cl);
  be_.layernorm_backward_weight(g.ln2_w, g.ln2_b, st.dln2.view(), st.res2.view(), st.ln2_mean.view(),
                                st.ln2_rstd.view(), N, C);
  be_.layernorm_backward_weight(g.ln1_w, g.ln1_b, st.dln1.view(), st.x.view(), st.ln1_mean.view(), st.ln1_rstd.view(),
                                N, C);
  st.clear();
}

}  // namespace zeropp::e2e
