#include "e2e/model/ulysses_attention.hpp"

#include <array>
#include <stdexcept>
#include <vector>

namespace zeropp::e2e {
namespace {

// Column ranges of head group g in a row of [q (NH heads) | k (KVH) | v (KVH)], hs columns per head.
struct HeadGroups {
  int NH, KVH, hs, cp;
  int W() const { return (NH + 2 * KVH) * hs; }
  int nq() const { return NH / cp; }
  int nkv() const { return KVH / cp; }
  int Wg() const { return (nq() + 2 * nkv()) * hs; }  // a head group's qkv columns
  // {offset in the full row, offset in the group's row, width} of q, k and v.
  std::vector<std::array<int, 3>> parts(int g) const {
    return {{g * nq() * hs, 0, nq() * hs},
            {(NH + g * nkv()) * hs, nq() * hs, nkv() * hs},
            {(NH + KVH + g * nkv()) * hs, (nq() + nkv()) * hs, nkv() * hs}};
  }
};

// Row t of sequence b of this rank's share <-> row (b, r*Tl + t) of the whole sequence.
std::int64_t whole_row(int b, int T, int r, int Tl, int t) { return std::int64_t{b} * T + std::int64_t{r} * Tl + t; }

void check(const ContextParallel& cp, int NH, int KVH) {
  if (cp.size > 1 && cp.comm == nullptr) throw std::invalid_argument("ulysses attention: cp > 1 needs a communicator");
  if (NH % cp.size != 0 || KVH % cp.size != 0)
    throw std::invalid_argument("ulysses attention: cp must divide the heads and the key/value heads");
}

}  // namespace

void ulysses_attention_forward(Backend& be, const ContextParallel& cp, Tensor out, UlyssesStash& st, Tensor qkv, int B,
                               int Tl, int NH, int KVH, int hs) {
  check(cp, NH, KVH);
  const HeadGroups hg{NH, KVH, hs, cp.size};
  const int P = cp.size, r = cp.rank, T = P * Tl, W = hg.W(), Wg = hg.Wg(), Cg = hg.nq() * hs, C = NH * hs;
  const std::int64_t rows = std::int64_t{B} * Tl;
  const DType dt = qkv.dtype;
  // Sequence split -> head split: block g holds this rank's rows of head group g.
  Buffer send(be, P * rows * Wg, dt), recv(be, send.numel(), dt);
  for (int g = 0; g < P; ++g)
    for (std::int64_t i = 0; i < rows; ++i)
      for (const auto& [full, part, width] : hg.parts(g))
        be.copy(send.view().slice((g * rows + i) * Wg + part, width), qkv.slice(i * W + full, width), width);
  be.synchronize();
  if (P > 1) cp.comm->all_to_all(send.view(), recv.view(), rows * Wg);
  be.copy(recv.view().slice(r * rows * Wg, rows * Wg), send.view().slice(r * rows * Wg, rows * Wg), rows * Wg);
  st.qkv = Buffer(be, std::int64_t{B} * T * Wg, dt);
  for (int p = 0; p < P; ++p)  // rank p's rows, in sequence order
    for (int b = 0; b < B; ++b)
      be.copy(st.qkv.view().slice(whole_row(b, T, p, Tl, 0) * Wg, std::int64_t{Tl} * Wg),
              recv.view().slice((p * rows + std::int64_t{b} * Tl) * Wg, std::int64_t{Tl} * Wg), std::int64_t{Tl} * Wg);
  st.out = Buffer(be, std::int64_t{B} * T * Cg, dt);
  st.lse = Buffer(be, std::int64_t{B} * hg.nq() * T, DType::f32);
  be.flash_attention_forward(st.out.view(), st.lse.view(), st.qkv.view(), B, T, hg.nq(), hg.nkv(), hs);
  // Head split -> sequence split: block p holds rank p's rows of this rank's heads.
  Buffer osend(be, P * rows * Cg, dt), orecv(be, osend.numel(), dt);
  for (int p = 0; p < P; ++p)
    for (int b = 0; b < B; ++b)
      be.copy(osend.view().slice((p * rows + std::int64_t{b} * Tl) * Cg, std::int64_t{Tl} * Cg),
              st.out.view().slice(whole_row(b, T, p, Tl, 0) * Cg, std::int64_t{Tl} * Cg), std::int64_t{Tl} * Cg);
  be.synchronize();
  if (P > 1) cp.comm->all_to_all(osend.view(), orecv.view(), rows * Cg);
  be.copy(orecv.view().slice(r * rows * Cg, rows * Cg), osend.view().slice(r * rows * Cg, rows * Cg), rows * Cg);
  for (int g = 0; g < P; ++g)
    for (std::int64_t i = 0; i < rows; ++i)
      be.copy(out.slice(i * C + std::int64_t{g} * Cg, Cg), orecv.view().slice((g * rows + i) * Cg, Cg), Cg);
}

void ulysses_attention_backward(Backend& be, const ContextParallel& cp, Tensor dqkv, Tensor dout,
                                const UlyssesStash& st, int B, int Tl, int NH, int KVH, int hs) {
  check(cp, NH, KVH);
  const HeadGroups hg{NH, KVH, hs, cp.size};
  const int P = cp.size, r = cp.rank, T = P * Tl, W = hg.W(), Wg = hg.Wg(), Cg = hg.nq() * hs, C = NH * hs;
  const std::int64_t rows = std::int64_t{B} * Tl;
  const DType dt = dout.dtype;
  // dout: sequence split -> head split (as the forward's q, k, v).
  Buffer send(be, P * rows * Cg, dt), recv(be, send.numel(), dt);
  for (int g = 0; g < P; ++g)
    for (std::int64_t i = 0; i < rows; ++i)
      be.copy(send.view().slice((g * rows + i) * Cg, Cg), dout.slice(i * C + std::int64_t{g} * Cg, Cg), Cg);
  be.synchronize();
  if (P > 1) cp.comm->all_to_all(send.view(), recv.view(), rows * Cg);
  be.copy(recv.view().slice(r * rows * Cg, rows * Cg), send.view().slice(r * rows * Cg, rows * Cg), rows * Cg);
  Buffer dout_heads(be, std::int64_t{B} * T * Cg, dt);
  for (int p = 0; p < P; ++p)
    for (int b = 0; b < B; ++b)
      be.copy(dout_heads.view().slice(whole_row(b, T, p, Tl, 0) * Cg, std::int64_t{Tl} * Cg),
              recv.view().slice((p * rows + std::int64_t{b} * Tl) * Cg, std::int64_t{Tl} * Cg), std::int64_t{Tl} * Cg);
  Buffer dheads(be, std::int64_t{B} * T * Wg, dt);
  be.flash_attention_backward(dheads.view(), dout_heads.view(), st.out.view(), st.lse.view(), st.qkv.view(), B, T,
                              hg.nq(), hg.nkv(), hs);
  // dq, dk, dv: head split -> sequence split.
  Buffer gsend(be, P * rows * Wg, dt), grecv(be, gsend.numel(), dt);
  for (int p = 0; p < P; ++p)
    for (int b = 0; b < B; ++b)
      be.copy(gsend.view().slice((p * rows + std::int64_t{b} * Tl) * Wg, std::int64_t{Tl} * Wg),
              dheads.view().slice(whole_row(b, T, p, Tl, 0) * Wg, std::int64_t{Tl} * Wg), std::int64_t{Tl} * Wg);
  be.synchronize();
  if (P > 1) cp.comm->all_to_all(gsend.view(), grecv.view(), rows * Wg);
  be.copy(grecv.view().slice(r * rows * Wg, rows * Wg), gsend.view().slice(r * rows * Wg, rows * Wg), rows * Wg);
  for (int g = 0; g < P; ++g)
    for (std::int64_t i = 0; i < rows; ++i)
      for (const auto& [full, part, width] : hg.parts(g))
        be.copy(dqkv.slice(i * W + full, width), grecv.view().slice((g * rows + i) * Wg + part, width), width);
}

}  // namespace zeropp::e2e
