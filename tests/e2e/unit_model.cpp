// The GPT as chunks: model-level gradient check, F/B/W bookkeeping, B+W == fused, split == whole (bitwise),
// recompute == keep (bitwise), split-independent init, and the loss falling on the synthetic task.
#include <gtest/gtest.h>

#include <cmath>

#include "cost_model/analytic/params.hpp"
#include "cost_model/spec/error.hpp"
#include "e2e/backend/cpu_backend.hpp"
#include "e2e/data/token_batch.hpp"
#include "e2e/model/chunk.hpp"
#include "e2e/model/gpt_config.hpp"
#include "e2e/model/reference.hpp"
#include "tests/e2e/unit_test_util.hpp"

namespace zeropp::e2e {
namespace {

using testing::download;
using testing::rel_error;
using testing::upload;

GptConfig tiny() {
  GptConfig g;
  g.L = 2;
  g.C = 8;
  g.NH = 2;
  g.T = 4;
  g.V = 11;
  g.F = 32;
  return g;
}

// Llama layers (RMSNorm, SwiGLU, no biases), 4 query heads over 2 KV heads, RoPE, untied head; flash attention,
// or the unfused kernel with half of each head rotating (a partial rotary share).
GptConfig tiny_llama(bool flash) {
  GptConfig g = testing::tiny_llama(flash);
  if (!flash) g.rotary_fraction = 0.5;  // the unfused variant also rotates only half of each head
  return g;
}

// Every layer style the model checks below run on.
std::vector<GptConfig> styles() {
  GptConfig gpt_flash_rope = tiny();  // GPT layers with RoPE, flash attention and an untied head
  gpt_flash_rope.rope = true;
  gpt_flash_rope.flash = true;
  gpt_flash_rope.tied = false;
  return {tiny(), tiny_llama(true), tiny_llama(false), gpt_flash_rope};
}

void check_model_gradient(const GptConfig& g);
void check_block_input_gradient(const GptConfig& g);
void check_split(const GptConfig& g);
void check_recompute(const GptConfig& g);

// Whole model (one chunk), parameters initialised from `seed`, returning the loss of batch `tb`.
double model_loss(Chunk& m, const TokenBatch& tb) {
  m.forward(0, tb, Tensor{});
  const double l = m.loss(0);
  m.clear();
  return l;
}

TEST(Model, GradientMatchesFiniteDifferences) {
  for (const GptConfig& g : styles()) {
    SCOPED_TRACE(describe(g));
    check_model_gradient(g);
  }
}

void check_model_gradient(const GptConfig& g) {
  CpuBackend be;
  const int b = 2;
  Chunk m(be, g, chunk_spec_for_stage(g, 0, 1, b, 1));
  m.allocate_parameters();
  m.init_parameters(7);
  // Larger weights than GPT-2's 0.02 so that every parameter has a gradient well above fp32 noise.
  auto p = download(be, m.parameters());
  for (const ParamSegment& s : m.layout().segments()) {
    if (!s.decay) continue;
    for (std::int64_t i = 0; i < s.numel; ++i) p[static_cast<std::size_t>(s.offset + i)] *= 20.0f;
  }
  be.copy_from_host(m.parameters(), p.data());
  const SyntheticData data(g.V, 3, 0.5);
  const TokenBatch tb = data.batch(0, 0, 1, b, g.T);
  m.forward(0, tb, Tensor{});
  m.backward(0, Tensor{});
  const auto grad = download(be, m.gradients());
  // The loss is a mean over b*T tokens; check a spread of elements of every segment (each kind, each layer).
  std::vector<double> analytic, numeric;
  const float step = 1e-2f;
  for (const ParamSegment& s : m.layout().segments()) {
    for (std::int64_t k = 0; k < 3; ++k) {
      const std::int64_t i = s.offset + (k * 7919) % s.numel;
      const float keep = p[static_cast<std::size_t>(i)];
      p[static_cast<std::size_t>(i)] = keep + step;
      be.copy_from_host(m.parameters(), p.data());
      const double up = model_loss(m, tb);
      p[static_cast<std::size_t>(i)] = keep - step;
      be.copy_from_host(m.parameters(), p.data());
      const double down = model_loss(m, tb);
      p[static_cast<std::size_t>(i)] = keep;
      analytic.push_back(grad[static_cast<std::size_t>(i)]);
      numeric.push_back((up - down) / (2.0 * step));
    }
  }
  be.copy_from_host(m.parameters(), p.data());
  EXPECT_LT(rel_error(analytic, numeric), 2e-3);  // fp32 central differences; observed 8e-5
}

TEST(Model, BlockInputGradientMatchesFiniteDifferences) {
  for (const GptConfig& g : styles()) {
    SCOPED_TRACE(describe(g));
    check_block_input_gradient(g);
  }
}

void check_block_input_gradient(const GptConfig& g) {
  // A middle chunk (no embedding, no head) with objective sum(output * r): checks B's input gradient.
  CpuBackend be;
  const int b = 1;
  ChunkSpec spec = chunk_spec_for_stage(g, 0, 2, b, 1);
  spec.has_embedding = false;
  Chunk m(be, g, spec);
  m.allocate_parameters();
  m.init_parameters(9);
  auto p = download(be, m.parameters());
  for (const ParamSegment& s : m.layout().segments()) {
    if (!s.decay) continue;
    for (std::int64_t i = 0; i < s.numel; ++i) p[static_cast<std::size_t>(s.offset + i)] *= 20.0f;
  }
  be.copy_from_host(m.parameters(), p.data());
  auto x = testing::random_vector(static_cast<std::size_t>(m.activation_numel()), 21);
  const auto r = testing::random_vector(x.size(), 22);
  const TokenBatch none;
  auto objective = [&]() {
    m.forward(0, none, upload(be, x).view());
    const auto out = download(be, m.output(0));
    m.clear();
    double s = 0.0;
    for (std::size_t i = 0; i < out.size(); ++i) s += static_cast<double>(out[i]) * r[i];
    return s;
  };
  m.forward(0, none, upload(be, x).view());
  m.backward_input(0, upload(be, r).view());
  const auto dx = download(be, m.input_grad(0));
  m.backward_weight(0);
  std::vector<double> analytic(dx.begin(), dx.end()), numeric(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float keep = x[i];
    x[i] = keep + 1e-2f;
    const double up = objective();
    x[i] = keep - 1e-2f;
    const double down = objective();
    x[i] = keep;
    numeric[i] = (up - down) / 2e-2;
  }
  EXPECT_LT(rel_error(analytic, numeric), 2e-3);  // fp32 central differences; observed 1e-4
}

TEST(Model, SplitBackwardEqualsFusedBitwise) {
  CpuBackend be;
  const GptConfig g = tiny();
  const SyntheticData data(g.V, 5);
  Chunk a(be, g, chunk_spec_for_stage(g, 0, 1, 2, 3)), f(be, g, chunk_spec_for_stage(g, 0, 1, 2, 3));
  for (Chunk* c : {&a, &f}) {
    c->allocate_parameters();
    c->init_parameters(11);
  }
  for (int mb = 0; mb < 3; ++mb) {
    const TokenBatch tb = data.batch(0, mb, 3, 2, g.T);
    a.forward(mb, tb, Tensor{});
    f.forward(mb, tb, Tensor{});
  }
  // Split: all Bs first, then the Ws in reverse order (as a schedule may defer them). Fused: BW per micro-batch.
  for (int mb = 0; mb < 3; ++mb) a.backward_input(mb, Tensor{});
  for (int mb = 2; mb >= 0; --mb) a.backward_weight(mb);
  for (int mb = 0; mb < 3; ++mb) f.backward(mb, Tensor{});
  EXPECT_EQ(a.live_microbatches(), 0);
  const auto ga = download(be, a.gradients()), gf = download(be, f.gradients());
  // Per micro-batch contributions are identical; only the accumulation order across micro-batches differs,
  // which changes the last bits. With the same order the result is bitwise equal:
  double max_diff = 0.0;
  for (std::size_t i = 0; i < ga.size(); ++i) max_diff = std::max(max_diff, std::fabs(double(ga[i]) - gf[i]));
  EXPECT_LT(max_diff, 1e-6);
  Chunk s(be, g, chunk_spec_for_stage(g, 0, 1, 2, 3));
  s.allocate_parameters();
  s.init_parameters(11);
  for (int mb = 0; mb < 3; ++mb) {
    s.forward(mb, data.batch(0, mb, 3, 2, g.T), Tensor{});
    s.backward_input(mb, Tensor{});
    s.backward_weight(mb);
  }
  EXPECT_EQ(download(be, s.gradients()), gf);
}

TEST(Model, SplitIntoChunksEqualsWholeModel) {
  for (GptConfig g : styles()) {
    SCOPED_TRACE(describe(g));
    g.L = 4;
    check_split(g);
  }
}

void check_split(const GptConfig& g) {
  CpuBackend be;
  const int b = 2, stages = 4;
  const SyntheticData data(g.V, 5);
  const TokenBatch tb = data.batch(3, 1, 2, b, g.T);
  Chunk whole(be, g, chunk_spec_for_stage(g, 0, 1, b, 2));
  whole.allocate_parameters();
  whole.init_parameters(42);
  whole.forward(0, tb, Tensor{});
  const double whole_loss = whole.loss(0);
  whole.backward(0, Tensor{});
  const auto wp = download(be, whole.parameters()), wg = download(be, whole.gradients());

  std::vector<Chunk> chunks;
  for (int s = 0; s < stages; ++s) {
    chunks.emplace_back(be, g, chunk_spec_for_stage(g, s, stages, b, 2));
    chunks.back().allocate_parameters();
    chunks.back().init_parameters(42);
  }
  Tensor act;
  for (int s = 0; s < stages; ++s) {
    chunks[static_cast<std::size_t>(s)].forward(0, tb, act);
    if (s + 1 < stages) act = chunks[static_cast<std::size_t>(s)].output(0);
  }
  EXPECT_EQ(chunks.back().loss(0), whole_loss);  // bitwise: the same operations on the same numbers
  Tensor grad;
  for (int s = stages - 1; s >= 0; --s) {
    chunks[static_cast<std::size_t>(s)].backward_input(0, grad);
    if (s > 0) grad = chunks[static_cast<std::size_t>(s)].input_grad(0);
  }
  for (auto& c : chunks) c.backward_weight(0);
  // Every parameter and gradient equals the whole model's, segment by segment (init independent of the split).
  for (const Chunk& c : chunks) {
    const auto cp = download(be, c.parameters()), cg = download(be, c.gradients());
    for (const ParamSegment& s : c.layout().segments()) {
      const ParamSegment* w = whole.layout().find(s.name);
      ASSERT_NE(w, nullptr) << s.name;
      ASSERT_EQ(w->numel, s.numel);
      for (std::int64_t i = 0; i < s.numel; ++i) {
        ASSERT_EQ(cp[static_cast<std::size_t>(s.offset + i)], wp[static_cast<std::size_t>(w->offset + i)]) << s.name;
        if (s.kind != ParamKind::wte || !g.tied) {
          ASSERT_EQ(cg[static_cast<std::size_t>(s.offset + i)], wg[static_cast<std::size_t>(w->offset + i)]) << s.name;
        }
      }
    }
  }
  if (!g.tied) {
    // Untied: no copy, so the chunks' sums of squares add up to the whole model's.
    EXPECT_FALSE(chunks.back().layout().wte().has_value());
    double split_sq = 0.0;
    for (auto& c : chunks) split_sq += c.grad_sum_squares();
    EXPECT_NEAR(split_sq, whole.grad_sum_squares(), 1e-6 * split_sq);
    return;
  }
  // Tied embedding: first stage's wte gradient + last stage's copy = the whole model's (up to summation order).
  const auto e = download(be, chunks.front().tied_embedding_grad()),
             h = download(be, chunks.back().tied_embedding_grad());
  const auto we = download(be, whole.tied_embedding_grad());
  for (std::size_t i = 0; i < we.size(); ++i) EXPECT_NEAR(e[i] + h[i], we[i], 1e-7 + 1e-6 * std::fabs(we[i]));
  // The global norm counts the copy once: before the tied all-reduce, the chunks' sums of squares hold the
  // blocks and LNs (as the whole model), the first stage's own wte part, and nothing of the last stage's copy.
  double split_sq = 0.0;
  for (auto& c : chunks) split_sq += c.grad_sum_squares();
  double e_sq = 0.0, we_sq = 0.0;
  for (std::size_t i = 0; i < we.size(); ++i) {
    e_sq += double(e[i]) * e[i];
    we_sq += double(we[i]) * we[i];
  }
  const double expect = whole.grad_sum_squares() - we_sq + e_sq;
  EXPECT_NEAR(split_sq, expect, 1e-6 * expect);
  EXPECT_GT(std::fabs(we_sq - e_sq), 1e-3 * expect);  // the head's share is not negligible: the check has teeth
}

TEST(Model, RecomputeEqualsKeepBitwise) {
  for (const GptConfig& g : styles()) {
    SCOPED_TRACE(describe(g));
    check_recompute(g);
  }
}

void check_recompute(const GptConfig& g) {
  CpuBackend be;
  const SyntheticData data(g.V, 5);
  ReferenceConfig rc;
  rc.model = g;
  rc.micro_batch = 2;
  rc.microbatches = 3;
  rc.seed = 3;
  ReferenceTrainer keep(be, rc, data);
  rc.stash = StashMode::recompute;
  ReferenceTrainer recompute(be, rc, data);
  for (int it = 0; it < 2; ++it) {
    const StepResult a = keep.step(), b = recompute.step();
    EXPECT_EQ(a.loss, b.loss);
    EXPECT_EQ(a.grad_norm, b.grad_norm);
  }
  EXPECT_EQ(keep.host_parameters(), recompute.host_parameters());
}

TEST(Model, FusedReferenceEqualsSplitReferenceBitwise) {
  CpuBackend be;
  const GptConfig g = tiny();
  const SyntheticData data(g.V, 5);
  ReferenceConfig rc;
  rc.model = g;
  rc.micro_batch = 1;
  rc.microbatches = 2;
  ReferenceTrainer split(be, rc, data);
  rc.fused_backward = true;
  ReferenceTrainer fused(be, rc, data);
  split.step();
  fused.step();
  EXPECT_EQ(split.host_parameters(), fused.host_parameters());
}

TEST(Model, OutOfOrderActionsAreErrors) {
  CpuBackend be;
  const GptConfig g = tiny();
  const SyntheticData data(g.V, 5);
  const TokenBatch tb = data.batch(0, 0, 1, 1, g.T);
  Chunk m(be, g, chunk_spec_for_stage(g, 0, 1, 1, 1));
  EXPECT_THROW(m.forward(0, tb, Tensor{}), std::logic_error);  // no parameters bound
  m.allocate_parameters();
  m.init_parameters(1);
  EXPECT_THROW(m.backward_input(0, Tensor{}), std::logic_error);  // B before F
  m.forward(0, tb, Tensor{});
  EXPECT_THROW(m.forward(0, tb, Tensor{}), std::logic_error);  // F twice
  EXPECT_THROW(m.backward_weight(0), std::logic_error);        // W before B
  EXPECT_THROW(m.recompute(0), std::logic_error);              // RECOMPUTE of a kept stash
  m.backward_input(0, Tensor{});
  EXPECT_THROW(m.backward_input(0, Tensor{}), std::logic_error);  // B twice
  m.backward_weight(0);
  EXPECT_FALSE(m.has_stash(0));
  m.forward(1, tb, Tensor{}, StashMode::recompute);
  EXPECT_THROW(m.backward_input(1, Tensor{}), std::logic_error);  // B after a dropping F without RECOMPUTE
  m.recompute(1);
  m.backward(1, Tensor{});
  EXPECT_EQ(m.live_microbatches(), 0);
  // Wrong activation size for a middle chunk.
  Chunk mid(be, g, chunk_spec_for_stage(g, 1, 2, 1, 1));
  mid.allocate_parameters();
  Buffer small(be, 3);
  EXPECT_THROW(mid.forward(0, tb, small.view()), std::invalid_argument);
}

TEST(Model, RecomputeKeepsOnlyTheInput) {
  CpuBackend be;
  const GptConfig g = tiny();
  const SyntheticData data(g.V, 5);
  ChunkSpec spec = chunk_spec_for_stage(g, 1, 2, 2, 1);
  spec.has_head = false;  // a middle chunk: its F output is sent on
  Chunk mid(be, g, spec);
  mid.allocate_parameters();
  mid.init_parameters(1);
  const auto x = testing::random_vector(static_cast<std::size_t>(mid.activation_numel()), 3);
  const Buffer in = upload(be, x);
  const std::size_t base = be.bytes_in_use();
  mid.forward(0, TokenBatch{}, in.view(), StashMode::recompute);
  mid.release_output(0);
  EXPECT_EQ(be.bytes_in_use() - base, x.size() * sizeof(float));  // just the chunk input
  mid.recompute(0);
  EXPECT_GT(be.bytes_in_use() - base, 4 * x.size() * sizeof(float));
  EXPECT_THROW(mid.output(0), std::logic_error);  // released output stays released
}

// The model half of the trainer's list (gpt_config.hpp): what it cannot compute is refused, naming the key, so a
// measured run is never compared with a prediction for another layer.
TEST(Model, ConfigRefusesWhatTheTrainerDoesNotRun) {
  auto refused = [](const ModelSpec& m) {
    try {
      gpt_config_from(m);
    } catch (const SpecError& e) {
      return std::string(e.field());
    }
    return std::string("accepted");
  };
  ModelSpec gpt;  // a GPT-3-era layer: gelu, dropout by default
  gpt.name = "g";
  gpt.layers = 2;
  gpt.hidden = 8;
  gpt.heads = 2;
  gpt.seq_len = 4;
  gpt.vocab = 11;
  EXPECT_EQ(refused(gpt), "model.dropout");
  gpt.dropout = false;
  EXPECT_EQ(refused(gpt), "accepted");
  EXPECT_TRUE(gpt_config_from(gpt).flash);  // without dropout the model side's default kernel is flash
  ModelSpec llama = gpt;
  llama.mlp = MlpKind::swiglu;
  llama.dropout.reset();
  llama.learned_positions = false;
  llama.rope_scaling = "llama3";
  EXPECT_EQ(refused(llama), "model.rope_scaling");
  llama.rope_scaling.clear();
  llama.rotary_fraction = 0.2;  // 0.2 of a head of 4 is no whole pair
  EXPECT_EQ(refused(llama), "model.rotary_fraction");
}

// The Llama facts come from the model side's own: the layer style from the MLP kind (as params.hpp), the kernel
// from attention_kind(), the sizes and rotary settings as stated; the parameter count is the cost model's.
TEST(Model, ConfigFromTheModelSideAndBack) {
  ModelSpec m;
  m.name = "l";
  m.layers = 2;
  m.hidden = 64;
  m.heads = 8;
  m.kv_heads = 2;
  m.seq_len = 16;
  m.vocab = 100;
  m.mlp = MlpKind::swiglu;
  m.tied_embedding = false;
  m.learned_positions = false;
  m.rope_theta = 500000;
  const GptConfig g = gpt_config_from(m);
  EXPECT_TRUE(g.llama && g.rope && g.flash && !g.tied && !g.biases() && g.rmsnorm());
  EXPECT_EQ(g.kv_heads(), 2);
  EXPECT_EQ(g.F, 256);  // Llama's rule: 256 * ceil(int(2 * 4 * 64 / 3) / 256)
  EXPECT_EQ(g.rope_theta, 500000);
  EXPECT_EQ(g.rotary_dims(), 8);
  EXPECT_EQ(g.total_params(), analytic::total_params(m));
  EXPECT_EQ(g.total_params(), analytic::total_params(to_model_spec(g)));
  CpuBackend be;
  Chunk whole(be, g, chunk_spec_for_stage(g, 0, 1, 1, 1));
  EXPECT_EQ(whole.layout().numel(), g.total_params());  // the layout holds exactly the model's parameters
  GptConfig gpt = tiny();
  EXPECT_EQ(Chunk(be, gpt, chunk_spec_for_stage(gpt, 0, 1, 1, 1)).layout().numel(), gpt.total_params());
}

TEST(Model, InitStatistics) {
  // GPT-2 init: weights ~ N(0, 0.02), residual projections ~ N(0, 0.02/sqrt(2L)), LN weights 1, biases 0.
  CpuBackend be;
  GptConfig g;
  g.L = 2;
  g.C = 64;
  g.NH = 4;
  g.T = 16;
  g.V = 128;
  g.F = 256;
  Chunk m(be, g, chunk_spec_for_stage(g, 0, 1, 1, 1));
  m.allocate_parameters();
  m.init_parameters(5);
  const auto p = download(be, m.parameters());
  auto stats = [&](const ParamSegment& s) {
    double sum = 0.0, sq = 0.0;
    for (std::int64_t i = 0; i < s.numel; ++i) {
      sum += p[static_cast<std::size_t>(s.offset + i)];
      sq += double(p[static_cast<std::size_t>(s.offset + i)]) * p[static_cast<std::size_t>(s.offset + i)];
    }
    return std::pair{sum / s.numel, std::sqrt(sq / s.numel)};
  };
  const auto [mean_fc, rms_fc] = stats(m.layout().segment(ParamKind::fc_w, 1));
  EXPECT_NEAR(mean_fc, 0.0, 0.001);
  EXPECT_NEAR(rms_fc, 0.02, 0.0005);
  const auto [mean_proj, rms_proj] = stats(m.layout().segment(ParamKind::fcproj_w, 0));
  EXPECT_NEAR(rms_proj, 0.02 / std::sqrt(4.0), 0.0003);
  EXPECT_EQ(stats(m.layout().segment(ParamKind::ln2_w, 0)).first, 1.0);
  EXPECT_EQ(stats(m.layout().segment(ParamKind::qkv_b, 1)).second, 0.0);
  // Different layers draw different numbers.
  EXPECT_NE(p[static_cast<std::size_t>(m.layout().segment(ParamKind::fc_w, 0).offset)],
            p[static_cast<std::size_t>(m.layout().segment(ParamKind::fc_w, 1).offset)]);
}

TEST(Model, SyntheticLossFalls) {
  // L=2, C=32, 4 heads, T=16, V=64, b=4, 2 micro-batches, 50 steps of AdamW(lr 3e-3): the loss must fall from
  // about ln 64 = 4.16 to well below it, towards the task's floor (0.1 noise: 0.73 nats).
  CpuBackend be;
  const GptConfig g = testing::synthetic_task_model();
  const SyntheticData data(g.V, 17, 0.1);
  ReferenceConfig rc;
  rc.model = g;
  rc.micro_batch = 4;
  rc.microbatches = 2;
  rc.optim.lr = 3e-3f;
  rc.optim.weight_decay = 0.0f;
  ReferenceTrainer t(be, rc, data);
  const double first = t.step().loss;
  double last = first;
  for (int i = 1; i < 50; ++i) last = t.step().loss;
  EXPECT_NEAR(first, std::log(64.0), 0.1);
  EXPECT_LT(last, 0.5 * first) << "first " << first << " last " << last << " floor " << data.entropy_floor();
  EXPECT_GT(last, data.entropy_floor() - 0.2);
}

}  // namespace
}  // namespace zeropp::e2e

namespace zeropp::e2e {
namespace {

// The trainer's one list (gpt_config.hpp, key_support) sorts every key of a plan's "model" and "parallel" objects
// into executed or refused: a key added to the spec without a decision here fails this test.
TEST(Model, EveryPlanKeyIsExecutedOrRefused) {
  ModelSpec m;
  m.kv_heads = 1;
  m.ffn_hidden = 1;
  m.attention = AttentionKind::flash;
  m.dropout = false;
  m.rope_theta = 2;
  m.rotary_fraction = 1;
  m.rope_scaling = "x";
  ParallelSpec p;
  p.framework = Framework::megatron;
  p.reduce_dtype = Dtype::fp32;
  p.first_stage_layers = p.last_stage_layers = 1;  // written only when given
  p.cp = 2;                                         // cp and cp_kind written only with a CP group
  p.fp8 = true;                                     // fp8_recipe and fp8_all_gather written only in FP8
  p.dp_shard = 1;                                   // written only when given (HSDP)
  p.grad_accumulation_fusion = false;               // written only when not Megatron's default
  p.transformer_impl = TransformerImpl::local;      // written only when given
  std::vector<std::string> keys;
  const nlohmann::json model = to_json(m), parallel = to_json(p);  // items() must not outlive its object
  for (const auto& [k, v] : model.items()) keys.push_back("model." + k);
  for (const auto& [k, v] : parallel.items()) keys.push_back("parallel." + k);
  for (const std::string& key : keys) {
    bool listed = false;
    for (const KeySupport& s : key_support()) listed = listed || key == s.key;
    EXPECT_TRUE(listed) << key << " is neither executed nor refused in key_support()";
  }
  EXPECT_EQ(keys.size(), key_support().size()) << "key_support() lists a key the spec does not have";
}

}  // namespace
}  // namespace zeropp::e2e

namespace zeropp::e2e {
namespace {

// The plan half of the list on both backends' precisions (no GPU needed: the rules are pure).
TEST(Model, PlanKeysRefusedForTheBackend) {
  auto plan = [](const std::string& parallel) {
    return plan_from_json(nlohmann::json::parse(R"({"model": {"name": "m", "layers": 4, "hidden": 32, "heads": 4,
        "seq_len": 16, "vocab": 64, "mlp": "swiglu"}, "cluster": {"name": "c", "nodes": 2, "gpus_per_node": 4,
        "peak_tflops": {"fp32": 1, "bf16": 2}, "memory_gib": 4, "intra": {"bandwidth_GBps": 5, "latency_us": 2},
        "inter": {"bandwidth_GBps": 5, "latency_us": 2}, "gpu": {"sm_count": {"value": 132, "provenance": "nominal"},
        "compute_capability": {"value": 9.0, "provenance": "nominal"}}}, "parallel": )" +
                                                parallel + "}"));
  };
  auto refused = [](const Plan& p, bool cpu) {
    try {
      check_plan_runs(p, cpu);
    } catch (const SpecError& e) {
      return std::string(e.field());
    }
    return std::string("runs");
  };
  const std::string zeropp = R"({"strategy": "zeropp_b", "z": 2, "pp": 2, "micro_batches": 4, "unit": 2, )";
  EXPECT_EQ(refused(plan(zeropp + R"("dtype": "fp32"})"), true), "runs");
  EXPECT_EQ(refused(plan(zeropp + R"("dtype": "fp32"})"), false), "parallel.dtype");  // CUDA computes in bf16
  EXPECT_EQ(refused(plan(zeropp + R"("dtype": "bf16"})"), true), "parallel.dtype");
  // ZeroPP's framework keeps bf16 gradients and reduces them in bf16; the trainer's are fp32 (Megatron's).
  EXPECT_EQ(refused(plan(zeropp + R"("dtype": "bf16"})"), false), "parallel.framework");
  EXPECT_EQ(refused(plan(zeropp + R"("dtype": "bf16", "reduce_dtype": "fp32"})"), false), "runs");
  EXPECT_EQ(refused(plan(zeropp + R"("dtype": "bf16", "reduce_dtype": "bf16", "framework": "megatron"})"), false),
            "parallel.reduce_dtype");
  // FP8 (e2e/model/fp8.hpp): emulated on cpu for current scaling; the cuda backend runs bf16 only. (Set on the parsed
  // plan: this cluster has no FP8 peak, which the cost model's validation refuses before the trainer's rules.)
  auto fp8 = [&](Fp8Recipe recipe, int cp) {
    Plan f = plan(R"({"strategy": "3d", "tp": 2, "micro_batches": 2, "dtype": "bf16"})");
    f.parallel.fp8 = true;
    f.parallel.fp8_recipe = recipe;
    f.parallel.cp = cp;
    return f;
  };
  EXPECT_EQ(refused(fp8(Fp8Recipe::te_current, 1), true), "runs");
  EXPECT_EQ(refused(fp8(Fp8Recipe::torchao_tensorwise, 1), true), "runs");
  EXPECT_EQ(refused(fp8(Fp8Recipe::te_current, 1), false), "parallel.dtype");  // cuda: bf16 GEMMs only
  EXPECT_EQ(refused(fp8(Fp8Recipe::te_delayed, 1), true), "parallel.fp8_recipe");
  EXPECT_EQ(refused(fp8(Fp8Recipe::torchao_rowwise, 1), true), "parallel.fp8_recipe");
  EXPECT_EQ(refused(fp8(Fp8Recipe::te_current, 2), true), "parallel.cp");
  const std::string megatron = R"({"strategy": "3d", "tp": 2, "pp": 2, "micro_batches": 4, "dtype": "bf16")";
  EXPECT_EQ(refused(plan(megatron + "}"), false), "runs");
  EXPECT_EQ(refused(plan(megatron + R"(, "framework": "fsdp2"})"), false), "parallel.framework");  // fp32 shards
  EXPECT_EQ(refused(plan(megatron + R"(, "recompute": "selective"})"), false), "parallel.recompute");
  EXPECT_EQ(refused(plan(megatron + R"(, "sequence_parallel": true, "tp_comm_overlap": true})"), false),
            "parallel.tp_comm_overlap");
  // The trainer reduces the bias and norm-weight gradients in kernels of their own (Megatron's local layers): a plan
  // that states TransformerEngine's is refused, one that states local runs, and one that says nothing is completed
  // to local (state_execution), so that it prices what it runs; the FSDP plans below keep their framework's rule.
  EXPECT_EQ(refused(plan(megatron + R"(, "transformer_impl": "transformer_engine"})"), false),
            "parallel.transformer_impl");
  EXPECT_EQ(refused(plan(megatron + R"(, "transformer_impl": "local"})"), false), "runs");
  Plan stated = plan(megatron + "}");
  state_execution(stated);
  EXPECT_EQ(stated.parallel.transformer_impl, TransformerImpl::local);
  Plan fsdp_stated = plan(R"({"strategy": "zero3", "z": 2, "dp": 2, "micro_batches": 2, "dtype": "fp32"})");
  state_execution(fsdp_stated);
  EXPECT_FALSE(fsdp_stated.parallel.transformer_impl.has_value());
  EXPECT_EQ(refused(plan(R"({"strategy": "1f1b_zero1", "pp": 2, "dp": 2, "micro_batches": 4, "dtype": "bf16",
                             "overlap_param_gather": true})"),
                    false),
            "parallel.overlap_param_gather");
  // FSDP runs, without and under a pipeline. HSDP runs, its replicas synchronised once after the backward (FSDP2's
  // per-layer buckets under the backward are refused with overlap_grad_reduce).
  const std::string fsdp = R"({"strategy": "zero3", "z": 2, "dp": 2, "micro_batches": 2, "dtype": "fp32")";
  EXPECT_EQ(refused(plan(fsdp + "}"), true), "runs");
  EXPECT_EQ(refused(plan(fsdp + R"(, "dp_shard": 2})"), true), "runs");  // dp_shard = dp: plain FSDP
  EXPECT_EQ(refused(plan(fsdp + R"(, "dp_shard": 1, "overlap_grad_reduce": false})"), true), "runs");
  EXPECT_EQ(refused(plan(fsdp + R"(, "dp_shard": 1})"), true), "parallel.overlap_grad_reduce");
  EXPECT_EQ(refused(plan(R"({"strategy": "zero3", "tp": 2, "dp": 2, "micro_batches": 2, "dtype": "fp32"})"), true),
            "runs");  // FSDP + TP
  // FSDP under a pipeline (torchtitan's PP + FSDP, 3-D with TP, HSDP) runs; a zero-bubble schedule is refused by the
  // plan's rules (spec/strategy) before the trainer's own list.
  const std::string fsdp_pp = R"({"strategy": "zero3", "pp": 2, "dp": 2, "micro_batches": 2, "dtype": "fp32")";
  EXPECT_EQ(refused(plan(fsdp_pp + "}"), true), "runs");
  EXPECT_EQ(
      refused(plan(fsdp_pp + R"(, "tp": 2, "schedule": "interleaved", "v": 2, "sequence_parallel": true})"), true),
      "runs");
  const std::string hsdp_pp = R"({"strategy": "zero3", "pp": 2, "dp": 4, "dp_shard": 2, "schedule": "gpipe", )"
                              R"("micro_batches": 2, "dtype": "fp32")";
  EXPECT_EQ(refused(plan(hsdp_pp + R"(, "overlap_grad_reduce": false})"), true), "runs");
  EXPECT_EQ(refused(plan(hsdp_pp + "}"), true), "parallel.overlap_grad_reduce");  // FSDP2's buckets, as above
  try {
    plan(fsdp_pp + R"(, "schedule": "zb_h1"})");
    ADD_FAILURE() << "zb_h1 with zero3 and pp 2 accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.field()), "parallel.schedule");
  }
  // Context parallelism: ring attention or Ulysses on the cpu backend, with every strategy; not on cuda.
  EXPECT_EQ(refused(plan(zeropp + R"("cp": 2, "dtype": "fp32"})"), true), "runs");
  EXPECT_EQ(refused(plan(zeropp + R"("cp": 2, "dtype": "bf16", "reduce_dtype": "fp32"})"), false), "parallel.cp");
  EXPECT_EQ(refused(plan(zeropp + R"("cp": 2, "cp_kind": "ulysses", "dtype": "fp32"})"), true), "runs");
  EXPECT_EQ(refused(plan(zeropp + R"("cp": 2, "cp_kind": "ulysses", "dtype": "bf16", "reduce_dtype": "fp32"})"),
                    false),
            "parallel.cp");
  EXPECT_EQ(refused(plan(R"({"strategy": "3d", "tp": 2, "cp": 2, "micro_batches": 2, "sequence_parallel": true,
                             "dtype": "fp32"})"),
                    true),
            "runs");
  EXPECT_EQ(refused(plan(fsdp + R"(, "cp": 2})"), true), "runs");  // the shard group holds the CP ranks
}

}  // namespace
}  // namespace zeropp::e2e
