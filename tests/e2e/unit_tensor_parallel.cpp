// Megatron-style tensor parallelism inside the model, with and without sequence parallelism: t = 2 ranks run
// as threads of this process over an in-process communicator and must reproduce the t = 1 model (loss,
// parameters after init, and gradients, each TP rank's slice against the slice of the full gradient).
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <thread>

#include "cost_model/spec/error.hpp"
#include "e2e/backend/cpu_backend.hpp"
#include "e2e/data/token_batch.hpp"
#include "e2e/model/chunk.hpp"
#include "tests/e2e/unit_test_util.hpp"

namespace zeropp::e2e {
namespace {

using testing::download;
using testing::tiny_llama;

// Collectives among threads: each rank publishes its pointer, all wait, each reads what it needs, all wait.
// Sums run in rank order, so every rank computes bit-identical results.
class ThreadGroup {
 public:
  explicit ThreadGroup(int size) : size_(size), barrier_(size), ptrs_(static_cast<std::size_t>(size)) {}
  int size() const { return size_; }
  void publish(int rank, const float* p) {
    ptrs_[static_cast<std::size_t>(rank)] = p;
    barrier_.arrive_and_wait();
  }
  const float* at(int rank) const { return ptrs_[static_cast<std::size_t>(rank)]; }
  void done() { barrier_.arrive_and_wait(); }

 private:
  int size_;
  std::barrier<> barrier_;
  std::vector<const float*> ptrs_;
};

class ThreadComm final : public TensorParallelComm {
 public:
  ThreadComm(ThreadGroup& g, int rank) : g_(g), rank_(rank) {}
  int size() const override { return g_.size(); }
  int rank() const override { return rank_; }
  void all_reduce_sum(Tensor inout, std::int64_t n) override {
    std::vector<float> sum(static_cast<std::size_t>(n), 0.0f);
    g_.publish(rank_, inout.f32());
    for (int r = 0; r < g_.size(); ++r) {
      for (std::int64_t i = 0; i < n; ++i) sum[static_cast<std::size_t>(i)] += g_.at(r)[i];
    }
    g_.done();
    std::copy(sum.begin(), sum.end(), inout.f32());
  }
  void all_gather(Tensor full, Tensor local, std::int64_t n) override {
    g_.publish(rank_, local.f32());
    for (int r = 0; r < g_.size(); ++r) std::copy(g_.at(r), g_.at(r) + n, full.f32() + r * n);
    g_.done();
  }
  void reduce_scatter_sum(Tensor local, Tensor full, std::int64_t n) override {
    std::vector<float> sum(static_cast<std::size_t>(n), 0.0f);
    g_.publish(rank_, full.f32());
    for (int r = 0; r < g_.size(); ++r) {
      for (std::int64_t i = 0; i < n; ++i) sum[static_cast<std::size_t>(i)] += g_.at(r)[rank_ * n + i];
    }
    g_.done();
    std::copy(sum.begin(), sum.end(), local.f32());
  }

 private:
  ThreadGroup& g_;
  int rank_;
};

struct RankResult {
  double loss = 0.0;
  std::vector<float> params, grads;
  std::unique_ptr<ChunkLayout> layout;
};

GptConfig tiny_gpt() {
  GptConfig g;
  g.L = 2;
  g.C = 8;
  g.NH = 2;
  g.T = 4;
  g.V = 11;
  g.F = 32;
  return g;
}


void check_tp(bool sequence_parallel, const GptConfig& g = tiny_gpt()) {
  const int b = 2, t = 2;
  const SyntheticData data(g.V, 9, 0.5);
  const TokenBatch tb = data.batch(1, 0, 1, b, g.T);
  const ChunkSpec spec = chunk_spec_for_stage(g, 0, 1, b, 1);

  CpuBackend be;
  Chunk full(be, g, spec);
  full.allocate_parameters();
  full.init_parameters(77);
  full.forward(0, tb, Tensor{});
  const double full_loss = full.loss(0);
  full.backward(0, Tensor{});
  const auto fp = download(be, full.parameters()), fg = download(be, full.gradients());
  const double full_sq = full.grad_sum_squares();

  ThreadGroup group(t);
  std::vector<RankResult> res(static_cast<std::size_t>(t));
  std::vector<double> sq(static_cast<std::size_t>(t));
  std::vector<std::thread> threads;
  for (int r = 0; r < t; ++r) {
    threads.emplace_back([&, r] {
      CpuBackend rb;
      ThreadComm comm(group, r);
      TensorParallel tp{t, r, sequence_parallel, &comm};
      Chunk c(rb, g, spec, tp);
      c.allocate_parameters();
      c.init_parameters(77);
      c.forward(0, tb, Tensor{});
      RankResult& out = res[static_cast<std::size_t>(r)];
      out.loss = c.loss(0);
      c.backward_input(0, Tensor{});
      c.backward_weight(0);
      c.sync_sequence_parallel_grads();
      sq[static_cast<std::size_t>(r)] = c.grad_sum_squares();
      out.params = download(rb, c.parameters());
      out.grads = download(rb, c.gradients());
      out.layout = std::make_unique<ChunkLayout>(c.layout());
    });
  }
  for (auto& th : threads) th.join();

  // Loss: every rank sees all rows without SP; with SP each rank's mean over its half, averaged.
  const double tp_loss = sequence_parallel ? (res[0].loss + res[1].loss) / 2 : res[0].loss;
  EXPECT_NEAR(tp_loss, full_loss, 1e-6 * full_loss);
  // Global norm: sliced parts summed over ranks, replicated ones once.
  EXPECT_NEAR(sq[0] + sq[1], full_sq, 1e-5 * full_sq);
  for (int r = 0; r < t; ++r) {
    const RankResult& rr = res[static_cast<std::size_t>(r)];
    for (const ParamSegment& s : rr.layout->segments()) {
      const ParamSegment* w = full.layout().find(s.name);
      ASSERT_NE(w, nullptr);
      std::vector<float> want_p(static_cast<std::size_t>(s.numel)), want_g(static_cast<std::size_t>(s.numel));
      slice_for_tp(g, s.kind, t, r, fp.data() + w->offset, want_p.data());
      slice_for_tp(g, s.kind, t, r, fg.data() + w->offset, want_g.data());
      double max_g = 0.0;
      for (float v : want_g) max_g = std::max(max_g, double(std::fabs(v)));
      for (std::int64_t i = 0; i < s.numel; ++i) {
        ASSERT_EQ(rr.params[static_cast<std::size_t>(s.offset + i)], want_p[static_cast<std::size_t>(i)]) << s.name;
        ASSERT_NEAR(rr.grads[static_cast<std::size_t>(s.offset + i)], want_g[static_cast<std::size_t>(i)],
                    1e-5 * max_g + 1e-9)
            << s.name << " rank " << r << " element " << i;
      }
    }
  }
}

TEST(TensorParallel, TwoRanksMatchOneRank) { check_tp(false); }
TEST(TensorParallel, TwoRanksWithSequenceParallelMatchOneRank) { check_tp(true); }
TEST(TensorParallel, LlamaGqaFlashTwoRanksMatchOneRank) { check_tp(false, tiny_llama(true)); }
TEST(TensorParallel, LlamaGqaFlashWithSequenceParallelMatchesOneRank) { check_tp(true, tiny_llama(true)); }
TEST(TensorParallel, LlamaGqaUnfusedTwoRanksMatchOneRank) { check_tp(false, tiny_llama(false)); }

TEST(TensorParallel, GqaAndSwigluSlicesPartitionTheFullTensors) {
  // Every element of the GQA qkv_w ([C + 2 KVH hs, C]) and of the SwiGLU fc_w ([2F, C]) is in exactly one slice.
  GptConfig g = tiny_llama(true);
  for (ParamKind kind : {ParamKind::qkv_w, ParamKind::fc_w}) {
    const std::size_t rows = kind == ParamKind::qkv_w ? g.qkv_width() : g.up_width();
    std::vector<float> full(rows * g.C);
    for (std::size_t i = 0; i < full.size(); ++i) full[i] = static_cast<float>(i);
    std::vector<int> seen(full.size(), 0);
    for (int r = 0; r < 2; ++r) {
      std::vector<float> local(full.size() / 2);
      slice_for_tp(g, kind, 2, r, full.data(), local.data());
      for (float v : local) ++seen[static_cast<std::size_t>(v)];
    }
    for (int s : seen) EXPECT_EQ(s, 1) << param_kind_name(kind);
  }
  // Rank 1's first query row is the third head's (rows 8..), its first key row the second KV head's (C + 4).
  std::vector<float> full(static_cast<std::size_t>(g.qkv_width()) * g.C), local(full.size() / 2);
  for (std::size_t i = 0; i < full.size(); ++i) full[i] = static_cast<float>(i / g.C);  // the row index
  slice_for_tp(g, ParamKind::qkv_w, 2, 1, full.data(), local.data());
  EXPECT_EQ(local[0], 8.0f);
  EXPECT_EQ(local[static_cast<std::size_t>(8) * g.C], 16.0f + 4.0f);          // k rows start at C = 16
  EXPECT_EQ(local[static_cast<std::size_t>(12) * g.C], 16.0f + 8.0f + 4.0f);  // v rows start at C + KVH hs
}

TEST(TensorParallel, RefusesTpThatDoesNotDivideKvHeads) {
  GptConfig g = tiny_llama(true);
  g.KVH = 1;  // multi-query attention: one KV head cannot be split over 2 ranks (no replication)
  EXPECT_THROW(ChunkLayout(g, chunk_spec_for_stage(g, 0, 1, 1, 1), 2), SpecError);
}

TEST(TensorParallel, SlicesPartitionTheFullTensor) {
  // Every element of qkv_w appears in exactly one rank's slice.
  GptConfig g;
  g.L = 1;
  g.C = 8;
  g.NH = 4;
  g.T = 2;
  g.V = 3;
  g.F = 32;
  std::vector<float> full(static_cast<std::size_t>(3 * 8 * 8));
  for (std::size_t i = 0; i < full.size(); ++i) full[i] = static_cast<float>(i);
  std::vector<int> seen(full.size(), 0);
  for (int r = 0; r < 4; ++r) {
    std::vector<float> local(full.size() / 4);
    slice_for_tp(g, ParamKind::qkv_w, 4, r, full.data(), local.data());
    for (float v : local) ++seen[static_cast<std::size_t>(v)];
  }
  for (int s : seen) EXPECT_EQ(s, 1);
}

}  // namespace
}  // namespace zeropp::e2e
