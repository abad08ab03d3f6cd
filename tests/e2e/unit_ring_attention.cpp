// Context-parallel attention against the unsplit attention: ring attention (e2e/model/ring_attention.hpp) and
// DeepSpeed-Ulysses (ulysses_attention.hpp). cp ranks run as threads, each with its own CPU backend, over in-memory
// mailboxes; every rank's output (and the ring's log-sum-exp) and q/k/v gradients must equal the rows of the
// single-sequence unfused kernel (softmax stored, no log-sum-exp merging: an independent computation) at the rank's
// positions (load-balanced chunks for the ring, contiguous rows for Ulysses).
#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "e2e/backend/cpu_backend.hpp"
#include "e2e/model/ring_attention.hpp"
#include "e2e/model/ulysses_attention.hpp"
#include "unit_test_util.hpp"

namespace zeropp::e2e {
namespace {

using testing::download;
using testing::random_vector;
using testing::rel_error;
using testing::upload;

// One mailbox per (receiver, sender) pair: FIFO, as MPI orders messages between two ranks.
class ThreadRing {
 public:
  explicit ThreadRing(int n) : n_(n), boxes_(static_cast<std::size_t>(n) * n) {}
  int size() const { return n_; }
  void put(int to, int from, std::vector<float> msg) {
    Box& b = boxes_[static_cast<std::size_t>(to * n_ + from)];
    {
      std::lock_guard<std::mutex> lock(b.m);
      b.q.push_back(std::move(msg));
    }
    b.cv.notify_one();
  }
  std::vector<float> take(int at, int from) {
    Box& b = boxes_[static_cast<std::size_t>(at * n_ + from)];
    std::unique_lock<std::mutex> lock(b.m);
    b.cv.wait(lock, [&] { return !b.q.empty(); });
    std::vector<float> msg = std::move(b.q.front());
    b.q.pop_front();
    return msg;
  }

 private:
  struct Box {
    std::mutex m;
    std::condition_variable cv;
    std::deque<std::vector<float>> q;
  };
  int n_;
  std::deque<Box> boxes_;
};

class ThreadRingComm final : public ContextParallelComm {
 public:
  ThreadRingComm(ThreadRing& ring, int rank, Backend& be) : ring_(ring), rank_(rank), be_(be) {}
  int size() const override { return ring_.size(); }
  int rank() const override { return rank_; }
  void ring_shift(Tensor send, Tensor recv, std::int64_t n) override {
    std::vector<float> msg(static_cast<std::size_t>(n));
    be_.copy_to_host(msg.data(), send.slice(0, n));
    ring_.put((rank_ + 1) % size(), rank_, std::move(msg));
    ++shifts;
    const std::vector<float> got = ring_.take(rank_, (rank_ + size() - 1) % size());
    be_.copy_from_host(recv.slice(0, n), got.data());
  }
  void all_to_all(Tensor send, Tensor recv, std::int64_t n) override {
    for (int p = 0; p < size(); ++p) {
      if (p == rank_) continue;
      std::vector<float> msg(static_cast<std::size_t>(n));
      be_.copy_to_host(msg.data(), send.slice(p * n, n));
      ring_.put(p, rank_, std::move(msg));
    }
    for (int p = 0; p < size(); ++p) {
      if (p == rank_) continue;
      const std::vector<float> got = ring_.take(rank_, p);
      be_.copy_from_host(recv.slice(p * n, n), got.data());
    }
    ++all_to_alls;
  }
  int shifts = 0, all_to_alls = 0;

 private:
  ThreadRing& ring_;
  int rank_;
  Backend& be_;
};

struct Shape {
  int B = 2, T = 16, NH = 4, KVH = 2, hs = 4;
  int W() const { return (NH + 2 * KVH) * hs; }
  int C() const { return NH * hs; }
};

// Rows of a [B, T, width] tensor at rank r's positions: [B, T/cp, width].
std::vector<float> rows_of(const std::vector<float>& full, const Shape& s, const ContextParallel& cp, int width) {
  const int Tl = s.T / cp.size;
  std::vector<float> out(static_cast<std::size_t>(s.B) * Tl * width);
  for (int b = 0; b < s.B; ++b)
    for (int t = 0; t < Tl; ++t)
      for (int c = 0; c < width; ++c)
        out[(static_cast<std::size_t>(b) * Tl + t) * width + c] =
            full[(static_cast<std::size_t>(b) * s.T + cp.position(t, s.T)) * width + c];
  return out;
}

// lse rows [B, NH, T] at rank r's positions.
std::vector<float> lse_of(const std::vector<float>& full, const Shape& s, const ContextParallel& cp) {
  const int Tl = s.T / cp.size;
  std::vector<float> out(static_cast<std::size_t>(s.B) * s.NH * Tl);
  for (int bh = 0; bh < s.B * s.NH; ++bh)
    for (int t = 0; t < Tl; ++t)
      out[static_cast<std::size_t>(bh) * Tl + t] = full[static_cast<std::size_t>(bh) * s.T + cp.position(t, s.T)];
  return out;
}

struct Unsplit {
  std::vector<float> out, lse, dqkv;
};

// The reference: the unfused kernel over whole sequences; lse from its stored probabilities is not available, so
// the flash kernel supplies it (its out is checked against the unfused one too).
Unsplit unsplit(const Shape& s, const std::vector<float>& qkv, const std::vector<float>& dout) {
  CpuBackend be;
  Buffer x = upload(be, qkv), g = upload(be, dout);
  Buffer out(be, std::int64_t{s.B} * s.T * s.C()), att(be, std::int64_t{s.B} * s.NH * s.T * s.T);
  Buffer fout(be, out.numel()), lse(be, std::int64_t{s.B} * s.NH * s.T), dx(be, x.numel());
  be.grouped_attention_forward(out.view(), att.view(), x.view(), s.B, s.T, s.NH, s.KVH, s.hs);
  be.grouped_attention_backward(dx.view(), g.view(), x.view(), att.view(), s.B, s.T, s.NH, s.KVH, s.hs);
  be.flash_attention_forward(fout.view(), lse.view(), x.view(), s.B, s.T, s.NH, s.KVH, s.hs);
  const auto o = download(be, out.view()), fo = download(be, fout.view());
  EXPECT_LT(rel_error(testing::to_double(fo), testing::to_double(o)), 1e-6);
  return {o, download(be, lse.view()), download(be, dx.view())};
}

void expect_ring_matches(int cp_size) {
  const Shape s;
  const auto qkv = random_vector(static_cast<std::size_t>(s.B) * s.T * s.W(), 11);
  const auto dout = random_vector(static_cast<std::size_t>(s.B) * s.T * s.C(), 12);
  const Unsplit ref = unsplit(s, qkv, dout);
  ThreadRing ring(cp_size);
  std::vector<Unsplit> got(static_cast<std::size_t>(cp_size));
  std::vector<int> shifts(static_cast<std::size_t>(cp_size));
  std::vector<std::thread> ranks;
  for (int r = 0; r < cp_size; ++r)
    ranks.emplace_back([&, r] {
      CpuBackend be;
      ThreadRingComm comm(ring, r, be);
      const ContextParallel cp{cp_size, r, &comm};
      const int Tl = s.T / cp_size;
      Buffer x = upload(be, rows_of(qkv, s, cp, s.W())), g = upload(be, rows_of(dout, s, cp, s.C()));
      Buffer out(be, std::int64_t{s.B} * Tl * s.C()), lse(be, std::int64_t{s.B} * s.NH * Tl), dx(be, x.numel());
      ring_attention_forward(be, cp, out.view(), lse.view(), x.view(), s.B, Tl, s.NH, s.KVH, s.hs);
      ring_attention_backward(be, cp, dx.view(), g.view(), out.view(), lse.view(), x.view(), s.B, Tl, s.NH, s.KVH,
                              s.hs);
      got[static_cast<std::size_t>(r)] = {download(be, out.view()), download(be, lse.view()), download(be, dx.view())};
      shifts[static_cast<std::size_t>(r)] = comm.shifts;
    });
  for (auto& t : ranks) t.join();
  for (int r = 0; r < cp_size; ++r) {
    const ContextParallel cp{cp_size, r, nullptr};
    const Unsplit& m = got[static_cast<std::size_t>(r)];
    EXPECT_LT(rel_error(testing::to_double(m.out), testing::to_double(rows_of(ref.out, s, cp, s.C()))), 1e-6)
        << "cp " << cp_size << " rank " << r;
    EXPECT_LT(rel_error(testing::to_double(m.lse), testing::to_double(lse_of(ref.lse, s, cp))), 1e-6)
        << "cp " << cp_size << " rank " << r;
    EXPECT_LT(rel_error(testing::to_double(m.dqkv), testing::to_double(rows_of(ref.dqkv, s, cp, s.W()))), 1e-5)
        << "cp " << cp_size << " rank " << r;
    // cp - 1 key/value shifts forward; backward cp - 1 for the keys and cp for their gradients.
    EXPECT_EQ(shifts[static_cast<std::size_t>(r)], cp_size == 1 ? 0 : 3 * cp_size - 2);
  }
}

TEST(RingAttention, OneRankEqualsTheUnsplitAttention) { expect_ring_matches(1); }
TEST(RingAttention, TwoRanksEqualTheUnsplitAttention) { expect_ring_matches(2); }
TEST(RingAttention, FourRanksEqualTheUnsplitAttention) { expect_ring_matches(4); }

void expect_ulysses_matches(int cp_size, const Shape& s) {
  const auto qkv = random_vector(static_cast<std::size_t>(s.B) * s.T * s.W(), 21);
  const auto dout = random_vector(static_cast<std::size_t>(s.B) * s.T * s.C(), 22);
  const Unsplit ref = unsplit(s, qkv, dout);
  ThreadRing ring(cp_size);
  std::vector<Unsplit> got(static_cast<std::size_t>(cp_size));
  std::vector<int> exchanges(static_cast<std::size_t>(cp_size));
  std::vector<std::thread> ranks;
  for (int r = 0; r < cp_size; ++r)
    ranks.emplace_back([&, r] {
      CpuBackend be;
      ThreadRingComm comm(ring, r, be);
      const ContextParallel cp{cp_size, r, &comm, true};
      const int Tl = s.T / cp_size;
      Buffer x = upload(be, rows_of(qkv, s, cp, s.W())), g = upload(be, rows_of(dout, s, cp, s.C()));
      Buffer out(be, std::int64_t{s.B} * Tl * s.C()), dx(be, x.numel());
      UlyssesStash st;
      ulysses_attention_forward(be, cp, out.view(), st, x.view(), s.B, Tl, s.NH, s.KVH, s.hs);
      ulysses_attention_backward(be, cp, dx.view(), g.view(), st, s.B, Tl, s.NH, s.KVH, s.hs);
      got[static_cast<std::size_t>(r)] = {download(be, out.view()), {}, download(be, dx.view())};
      exchanges[static_cast<std::size_t>(r)] = comm.all_to_alls;
    });
  for (auto& t : ranks) t.join();
  for (int r = 0; r < cp_size; ++r) {
    const ContextParallel cp{cp_size, r, nullptr, true};
    const Unsplit& m = got[static_cast<std::size_t>(r)];
    EXPECT_LT(rel_error(testing::to_double(m.out), testing::to_double(rows_of(ref.out, s, cp, s.C()))), 1e-6)
        << "cp " << cp_size << " rank " << r;
    EXPECT_LT(rel_error(testing::to_double(m.dqkv), testing::to_double(rows_of(ref.dqkv, s, cp, s.W()))), 1e-5)
        << "cp " << cp_size << " rank " << r;
    EXPECT_EQ(exchanges[static_cast<std::size_t>(r)], cp_size == 1 ? 0 : 4);  // two forward, two backward
  }
}

TEST(UlyssesAttention, OneRankEqualsTheUnsplitAttention) { expect_ulysses_matches(1, Shape{}); }
// 4 query heads over 2 key/value heads: each of 2 ranks gets 2 and 1.
TEST(UlyssesAttention, TwoRanksEqualTheUnsplitAttention) { expect_ulysses_matches(2, Shape{}); }
// 8 query heads over 4 key/value heads on 4 ranks.
TEST(UlyssesAttention, FourRanksEqualTheUnsplitAttention) { expect_ulysses_matches(4, Shape{2, 16, 8, 4, 4}); }

// DeepSpeed-Ulysses splits the sequence into contiguous rows.
TEST(UlyssesAttention, ContiguousRows) {
  const ContextParallel c{2, 1, nullptr, true};
  std::vector<int> p;
  for (int t = 0; t < 8; ++t) p.push_back(c.position(t, 16));
  EXPECT_EQ(p, (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
}

// Megatron's get_batch_on_this_cp_rank: 2*cp chunks, rank r holds chunks r and 2*cp-1-r.
TEST(RingAttention, LoadBalancedChunkOrder) {
  const int T = 16;
  auto positions = [&](int cp, int r) {
    const ContextParallel c{cp, r, nullptr};
    std::vector<int> p;
    for (int t = 0; t < T / cp; ++t) p.push_back(c.position(t, T));
    return p;
  };
  EXPECT_EQ(positions(2, 0), (std::vector<int>{0, 1, 2, 3, 12, 13, 14, 15}));
  EXPECT_EQ(positions(2, 1), (std::vector<int>{4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(positions(4, 0), (std::vector<int>{0, 1, 14, 15}));
  EXPECT_EQ(positions(4, 1), (std::vector<int>{2, 3, 12, 13}));
  EXPECT_EQ(positions(4, 3), (std::vector<int>{6, 7, 8, 9}));
  EXPECT_EQ(positions(1, 0), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
}

// TE's three cases: the diagonal (causal), an earlier rank's keys (their first chunk, no mask), a later rank's keys
// (only this rank's second chunk sees them, all of them, no mask).
TEST(RingAttention, BlockMasksFollowTheChunks) {
  const int Tl = 4;  // T = 16, cp = 4: two chunks of 2
  auto same = [](const Backend::AttentionBlock& a, const Backend::AttentionBlock& b) {
    return a.q_lo == b.q_lo && a.q_len == b.q_len && a.k_lo == b.k_lo && a.k_len == b.k_len && a.causal == b.causal;
  };
  EXPECT_TRUE(same(ring_block(1, 0, 4, Tl), {0, 4, 0, 4, true}));
  EXPECT_TRUE(same(ring_block(1, 1, 4, Tl), {0, 4, 0, 2, false}));  // keys of rank 0
  EXPECT_TRUE(same(ring_block(1, 2, 4, Tl), {2, 2, 0, 4, false}));  // keys of rank 3
  EXPECT_TRUE(same(ring_block(1, 3, 4, Tl), {2, 2, 0, 4, false}));  // keys of rank 2
  EXPECT_TRUE(same(ring_block(0, 1, 4, Tl), {2, 2, 0, 4, false}));  // keys of rank 3
}

}  // namespace
}  // namespace zeropp::e2e
