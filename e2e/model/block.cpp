#include "e2e/model/block.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "e2e/model/ring_attention.hpp"

namespace zeropp::e2e {

BlockShape block_shape(const GptConfig& g, int b, const TensorParallel& tp, const ContextParallel& cp) {
  BlockShape s;
  s.b = b;
  s.T = g.T;
  s.C = g.C;
  s.NH = g.NH;
  s.F = g.F;
  s.t = tp.size;
  s.sp = tp.sequence_parallel && tp.size > 1;
  s.KVH = g.kv_heads();
  s.llama = g.llama;
  s.rotary_dims = g.rotary_dims();
  s.rope_theta = g.rope_theta;
  s.flash = g.flash;
  s.cp = cp.size;
  s.fp8 = g.fp8;
  return s;
}

BlockTensors block_tensors(Tensor flat, const ChunkLayout& layout, int local_block) {
  const int layer = layout.spec().first_block + local_block;
  auto v = [&](ParamKind k) {
    const ParamSegment* s = layout.find(fmt::format("h{}.{}", layer, param_kind_name(k)));
    return s == nullptr ? Tensor{} : flat.slice(s->offset, s->numel);  // absent in this layer style: empty
  };
  return {v(ParamKind::ln1_w),     v(ParamKind::ln1_b),     v(ParamKind::qkv_w),    v(ParamKind::qkv_b),
          v(ParamKind::attproj_w), v(ParamKind::attproj_b), v(ParamKind::ln2_w),    v(ParamKind::ln2_b),
          v(ParamKind::fc_w),      v(ParamKind::fc_b),      v(ParamKind::fcproj_w), v(ParamKind::fcproj_b)};
}

void norm_forward(Backend& be, bool rms, Buffer& out, Buffer& mean, Buffer& rstd, Tensor x, Tensor w, Tensor b, int N,
                  int C) {
  out = Buffer(be, std::int64_t{N} * C, be.compute_dtype());
  rstd = Buffer(be, N);
  if (rms) {
    be.rmsnorm_forward(out.view(), rstd.view(), x, w, N, C);
    return;
  }
  mean = Buffer(be, N);
  be.layernorm_forward(out.view(), mean.view(), rstd.view(), x, w, b, N, C);
}

void norm_backward_input(Backend& be, bool rms, Tensor dinp, Tensor dout, Tensor x, Tensor mean, Tensor rstd, Tensor w,
                         int N, int C, bool accumulate) {
  if (rms)
    be.rmsnorm_backward_input(dinp, dout, x, rstd, w, N, C, accumulate);
  else
    be.layernorm_backward_input(dinp, dout, x, mean, rstd, w, N, C, accumulate);
}

void norm_backward_weight(Backend& be, bool rms, Tensor dw, Tensor db, Tensor dout, Tensor x, Tensor mean, Tensor rstd,
                          int N, int C) {
  if (rms)
    be.rmsnorm_backward_weight(dw, dout, x, rstd, N, C);
  else
    be.layernorm_backward_weight(dw, db, dout, x, mean, rstd, N, C);
}

void BlockStash::free_forward_only() {
  qkv.reset();
  att.reset();
  lse.reset();
  fch.reset();
  ulysses = UlyssesStash{};
  // Under SP, W reads the gathered norm outputs; the local ones were only the gathers' sources.
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
    linear_forward(out_local, inp_full, w, bias, Nf, IC, OC);
    return;
  }
  // The replicated bias enters the sum once, on TP rank 0 (Megatron adds it after the reduction; same sum).
  const Tensor b = tp_.rank == 0 ? bias : Tensor{};
  if (!s_.sp) {
    linear_forward(out_local, inp_full, w, b, Nf, IC, OC);
    tp_.comm->all_reduce_sum(out_local, std::int64_t{Nf} * OC);
    return;
  }
  Buffer partial(be_, std::int64_t{Nf} * OC, out_local.dtype);
  linear_forward(partial.view(), inp_full, w, b, Nf, IC, OC);
  tp_.comm->reduce_scatter_sum(out_local, partial.view(), std::int64_t{s_.rows()} * OC);
}

void BlockRunner::column_parallel_backward(Tensor dinp_local, Tensor dout_full, Tensor w, int IC, int OC) {
  const int Nf = s_.full_rows();
  if (s_.t == 1 || !s_.sp) {
    linear_backward_input(dinp_local, dout_full, w, Nf, IC, OC);
    if (s_.t > 1) tp_.comm->all_reduce_sum(dinp_local, std::int64_t{Nf} * IC);
    return;
  }
  Buffer partial(be_, std::int64_t{Nf} * IC, dinp_local.dtype);
  linear_backward_input(partial.view(), dout_full, w, Nf, IC, OC);
  tp_.comm->reduce_scatter_sum(dinp_local, partial.view(), std::int64_t{s_.rows()} * IC);
}

Tensor BlockRunner::fp8_operand(Buffer& tmp, Tensor x, Fp8Format f) {
  if (!s_.fp8.enabled) return x;
  if (x.dtype != DType::f32 || be_.name() != "cpu")
    throw std::logic_error("FP8 emulation runs on the cpu backend's fp32 tensors only");
  be_.synchronize();
  float amax = fp8_amax(x.f32(), x.numel);
  if (s_.t > 1 && s_.fp8.reduce_amax) {  // the whole tensor's amax: max over the TP ranks' values
    Buffer one(be_, 1, DType::f32), all(be_, s_.t, DType::f32);
    one.view().f32()[0] = amax;
    tp_.comm->all_gather(all.view(), one.view(), 1);
    amax = fp8_amax(all.view().f32(), s_.t);
  }
  tmp = Buffer(be_, x.numel, DType::f32);
  fp8_quantize_dequantize(tmp.view().f32(), x.f32(), x.numel, fp8_scale(amax, f), f);
  return tmp.view();
}

void BlockRunner::linear_forward(Tensor out, Tensor inp, Tensor w, Tensor bias, int N, int IC, int OC) {
  Buffer qx, qw;
  be_.linear_forward(out, fp8_operand(qx, inp.slice(0, std::int64_t{N} * IC), Fp8Format::e4m3),
                     fp8_operand(qw, w, Fp8Format::e4m3), bias, N, IC, OC);
}

void BlockRunner::linear_backward_input(Tensor dinp, Tensor dout, Tensor w, int N, int IC, int OC) {
  Buffer qdy, qw;
  be_.linear_backward_input(dinp, fp8_operand(qdy, dout.slice(0, std::int64_t{N} * OC), Fp8Format::e5m2),
                            fp8_operand(qw, w, Fp8Format::e4m3), N, IC, OC, false);
}

void BlockRunner::linear_backward_weight(Tensor dw, Tensor db, Tensor dout, Tensor inp, int N, int IC, int OC) {
  if (!s_.fp8.enabled) {
    be_.linear_backward_weight(dw, db, dout, inp, N, IC, OC);
    return;
  }
  Buffer qdy, qx;
  be_.linear_backward_weight(dw, Tensor{}, fp8_operand(qdy, dout.slice(0, std::int64_t{N} * OC), Fp8Format::e5m2),
                             fp8_operand(qx, inp.slice(0, std::int64_t{N} * IC), Fp8Format::e4m3), N, IC, OC);
  if (db.empty()) return;
  const float* d = dout.f32();  // row by row in index order, as the backend sums dbias
  float* b = db.f32();
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < OC; ++o) b[o] += d[std::int64_t{n} * OC + o];
}

// RoPE on q and k of every row at its position in the sequence: row r % T without CP; under CP each of the rank's
// chunks at its own global offset.
void BlockRunner::rope(Tensor qkv, bool inverse) {
  if (s_.rotary_dims == 0) return;
  const int NHl = s_.NHl(), KVHl = s_.KVHl(), hs = s_.hs();
  if (!cp_.enabled()) {
    be_.rope(qkv, s_.full_rows(), s_.T, NHl, KVHl, hs, s_.rotary_dims, s_.rope_theta, inverse, 0);
    return;
  }
  const int Tl = s_.Tl();
  for (int b = 0; b < s_.b; ++b)
    for (const ContextParallel::Run& run : cp_.runs(s_.T))
      be_.rope(qkv.slice(std::int64_t{b * Tl + run.row} * s_.Ql(), std::int64_t{run.len} * s_.Ql()), run.len, run.len,
               NHl, KVHl, hs, s_.rotary_dims, s_.rope_theta, inverse, run.pos);
}

// The attention core on this rank's heads: RoPE on q and k (in place: the stash keeps them rotated), then the
// unfused kernel (saves the softmax), the flash one (saves the log-sum-exp) or, under CP, the ring (flash-style) or
// Ulysses (the flash kernel on whole sequences of heads/cp heads).
void BlockRunner::attention_forward(BlockStash& st) {
  const int Nf = s_.full_rows(), NHl = s_.NHl(), KVHl = s_.KVHl(), hs = s_.hs();
  rope(st.qkv.view(), false);
  st.atty = Buffer(be_, std::int64_t{Nf} * s_.Cl(), be_.compute_dtype());
  if (cp_.enabled() && cp_.ulysses) {
    ulysses_attention_forward(be_, cp_, st.atty.view(), st.ulysses, st.qkv.view(), s_.b, s_.Tl(), NHl, KVHl, hs);
  } else if (cp_.enabled()) {
    st.lse = Buffer(be_, std::int64_t{s_.b} * NHl * s_.Tl(), DType::f32);
    ring_attention_forward(be_, cp_, st.atty.view(), st.lse.view(), st.qkv.view(), s_.b, s_.Tl(), NHl, KVHl, hs);
  } else if (s_.flash) {
    st.lse = Buffer(be_, std::int64_t{s_.b} * NHl * s_.T, DType::f32);
    be_.flash_attention_forward(st.atty.view(), st.lse.view(), st.qkv.view(), s_.b, s_.T, NHl, KVHl, hs);
  } else {
    st.att = Buffer(be_, std::int64_t{s_.b} * NHl * s_.T * s_.T, be_.compute_dtype());
    be_.grouped_attention_forward(st.atty.view(), st.att.view(), st.qkv.view(), s_.b, s_.T, NHl, KVHl, hs);
  }
}

// dqkv from the attention output's gradient; RoPE's backward (the inverse rotation) turns the gradients of the
// rotated q and k into those of the QKV projection's output, which W needs.
void BlockRunner::attention_backward(BlockStash& st, Tensor datty) {
  const int Nf = s_.full_rows(), NHl = s_.NHl(), KVHl = s_.KVHl(), hs = s_.hs();
  st.dqkv = Buffer(be_, std::int64_t{Nf} * s_.Ql(), be_.compute_dtype());
  if (cp_.enabled() && cp_.ulysses)
    ulysses_attention_backward(be_, cp_, st.dqkv.view(), datty, st.ulysses, s_.b, s_.Tl(), NHl, KVHl, hs);
  else if (cp_.enabled())
    ring_attention_backward(be_, cp_, st.dqkv.view(), datty, st.atty.view(), st.lse.view(), st.qkv.view(), s_.b,
                            s_.Tl(), NHl, KVHl, hs);
  else if (s_.flash)
    be_.flash_attention_backward(st.dqkv.view(), datty, st.atty.view(), st.lse.view(), st.qkv.view(), s_.b, s_.T, NHl,
                                 KVHl, hs);
  else
    be_.grouped_attention_backward(st.dqkv.view(), datty, st.qkv.view(), st.att.view(), s_.b, s_.T, NHl, KVHl, hs);
  rope(st.dqkv.view(), true);
}

void BlockRunner::forward(const BlockTensors& p, BlockStash& st, Tensor out) {
  const int N = s_.rows(), Nf = s_.full_rows(), C = s_.C, Cl = s_.Cl(), Fl = s_.Fl(), Ql = s_.Ql(), Ul = s_.Ul();
  const DType dt = be_.compute_dtype();
  const std::int64_t nc = std::int64_t{N} * C;
  // attention half
  norm_forward(be_, s_.llama, st.ln1, st.ln1_mean, st.ln1_rstd, st.x.view(), p.ln1_w, p.ln1_b, N, C);
  const Tensor ln1f = gather_rows(st.ln1_full, st.ln1.view(), C);
  st.qkv = Buffer(be_, std::int64_t{Nf} * Ql, dt);
  linear_forward(st.qkv.view(), ln1f, p.qkv_w, p.qkv_b, Nf, C, Ql);
  attention_forward(st);
  st.res2 = Buffer(be_, nc, dt);
  row_parallel_forward(st.res2.view(), st.atty.view(), p.attproj_w, p.attproj_b, Cl, C);
  be_.add(st.res2.view(), st.x.view(), st.res2.view(), nc);
  // MLP half
  norm_forward(be_, s_.llama, st.ln2, st.ln2_mean, st.ln2_rstd, st.res2.view(), p.ln2_w, p.ln2_b, N, C);
  const Tensor ln2f = gather_rows(st.ln2_full, st.ln2.view(), C);
  st.fch = Buffer(be_, std::int64_t{Nf} * Ul, dt);
  linear_forward(st.fch.view(), ln2f, p.fc_w, p.fc_b, Nf, C, Ul);
  st.fch_gelu = Buffer(be_, std::int64_t{Nf} * Fl, dt);
  if (s_.llama)
    be_.swiglu_forward(st.fch_gelu.view(), st.fch.view(), Nf, Fl);
  else
    be_.gelu_forward(st.fch_gelu.view(), st.fch.view(), std::int64_t{Nf} * Fl);
  row_parallel_forward(out, st.fch_gelu.view(), p.fcproj_w, p.fcproj_b, Fl, C);
  be_.add(out, st.res2.view(), out, nc);
}

void BlockRunner::backward_input(const BlockTensors& p, BlockStash& st, Buffer dout, Tensor dx) {
  const int N = s_.rows(), Nf = s_.full_rows(), C = s_.C, Cl = s_.Cl(), Fl = s_.Fl(), Ql = s_.Ql(), Ul = s_.Ul();
  const DType dt = be_.compute_dtype();
  const std::int64_t nc = std::int64_t{N} * C;
  if (st.qkv.empty()) throw std::logic_error("block backward_input without a forward stash");
  // MLP half: out = res2 + act(fch) Wfcproj^T, so dres2 = dout + norm2's input gradient.
  Buffer dres2(be_, nc, dt);
  be_.copy(dres2.view(), dout.view(), nc);
  if (s_.sp && s_.t > 1) {
    gather_rows(st.dout, dout.view(), C);
  } else {
    st.dout = std::move(dout);
  }
  Buffer dact(be_, std::int64_t{Nf} * Fl, dt);
  linear_backward_input(dact.view(), st.dout.view(), p.fcproj_w, Nf, Fl, C);
  st.dfch = Buffer(be_, std::int64_t{Nf} * Ul, dt);
  if (s_.llama)
    be_.swiglu_backward(st.dfch.view(), st.fch.view(), dact.view(), Nf, Fl);
  else
    be_.gelu_backward(st.dfch.view(), st.fch.view(), dact.view(), std::int64_t{Nf} * Fl);
  dact.reset();
  st.dln2 = Buffer(be_, nc, dt);
  column_parallel_backward(st.dln2.view(), st.dfch.view(), p.fc_w, C, Ul);
  norm_backward_input(be_, s_.llama, dres2.view(), st.dln2.view(), st.res2.view(), st.ln2_mean.view(),
                      st.ln2_rstd.view(), p.ln2_w, N, C, true);
  // Attention half: res2 = x + attention(...), so dx = dres2 + norm1's input gradient.
  Tensor dres2_local = dres2.view();
  if (s_.sp && s_.t > 1) {
    gather_rows(st.dres2_full, dres2_local, C);
  } else {
    st.dres2_full = std::move(dres2);
    dres2_local = st.dres2_full.view();
  }
  Buffer datty(be_, std::int64_t{Nf} * Cl, dt);
  linear_backward_input(datty.view(), st.dres2_full.view(), p.attproj_w, Nf, Cl, C);
  attention_backward(st, datty.view());
  datty.reset();
  st.dln1 = Buffer(be_, nc, dt);
  column_parallel_backward(st.dln1.view(), st.dqkv.view(), p.qkv_w, C, Ql);
  be_.copy(dx, dres2_local, nc);
  norm_backward_input(be_, s_.llama, dx, st.dln1.view(), st.x.view(), st.ln1_mean.view(), st.ln1_rstd.view(), p.ln1_w,
                      N, C, true);
  st.free_forward_only();
}

void BlockRunner::backward_weight(const BlockTensors& g, BlockStash& st) {
  const int N = s_.rows(), Nf = s_.full_rows(), C = s_.C, Cl = s_.Cl(), Fl = s_.Fl(), Ql = s_.Ql(), Ul = s_.Ul();
  if (st.dqkv.empty()) throw std::logic_error("block backward_weight before backward_input");
  const Tensor ln1f = st.ln1_full.empty() ? st.ln1.view() : st.ln1_full.view();
  const Tensor ln2f = st.ln2_full.empty() ? st.ln2.view() : st.ln2_full.view();
  linear_backward_weight(g.fcproj_w, g.fcproj_b, st.dout.view(), st.fch_gelu.view(), Nf, Fl, C);
  linear_backward_weight(g.fc_w, g.fc_b, st.dfch.view(), ln2f, Nf, C, Ul);
  linear_backward_weight(g.attproj_w, g.attproj_b, st.dres2_full.view(), st.atty.view(), Nf, Cl, C);
  linear_backward_weight(g.qkv_w, g.qkv_b, st.dqkv.view(), ln1f, Nf, C, Ql);
  norm_backward_weight(be_, s_.llama, g.ln2_w, g.ln2_b, st.dln2.view(), st.res2.view(), st.ln2_mean.view(),
                       st.ln2_rstd.view(), N, C);
  norm_backward_weight(be_, s_.llama, g.ln1_w, g.ln1_b, st.dln1.view(), st.x.view(), st.ln1_mean.view(),
                       st.ln1_rstd.view(), N, C);
  st.clear();
}

}  // namespace zeropp::e2e
