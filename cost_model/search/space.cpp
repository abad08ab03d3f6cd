#include "cost_model/search/space.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cost_model/analytic/divisors.hpp"
#include "cost_model/schedule/budget.hpp"
#include "cost_model/search/stage_splits.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/fp8.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::search {
namespace {

using analytic::divisors;

// torchao's enable_fsdp_float8_all_gather is a choice where the plan runs FP8 with the tensorwise recipe and
// ZeRO-3 sharded parameters (the rule validate_fp8 checks); elsewhere only off.
std::vector<bool> fp8_all_gather_choices(const ParallelSpec& p) {
  if (!p.fp8 || fp8_recipe_of(p) != Fp8Recipe::torchao_tensorwise || data_parallel_sync(p).shard_group <= 1)
    return {false};
  return {false, true};
}

std::vector<int> divisors_from(int n, int first) {
  std::vector<int> out;
  for (int x : divisors(n))
    if (x >= first) out.push_back(x);
  return out;
}

struct CpChoice {
  int cp;
  CpKind kind;
};

// The context-parallel groups tried with `gpus` GPUs left after the intra-node group of tp (space.hpp): every size
// that leaves each CP rank min_cp_tokens tokens or more, as Megatron's ring where the sequence splits into 2 cp
// chunks and as DeepSpeed-Ulysses where cp divides the sequence and a TP rank's heads and key/value heads
// (validate_context_parallel's rules).
std::vector<CpChoice> cp_choices(const Experiment& ex, const SpaceOptions& options, int gpus, int tp) {
  std::vector<CpChoice> out{{1, CpKind::ring}};
  const ModelSpec& m = ex.model;
  if (m.attention_kind() != AttentionKind::flash) return out;  // validate_context_parallel
  const int heads = m.heads / tp, kv_heads = m.kv_heads_or_heads() / tp;
  for (int cp : divisors_from(gpus, 2)) {
    if (m.seq_len / cp < options.min_cp_tokens) continue;
    if (m.seq_len % (2 * cp) == 0) out.push_back({cp, CpKind::ring});
    if (m.seq_len % cp == 0 && heads % cp == 0 && kv_heads % cp == 0) out.push_back({cp, CpKind::ulysses});
  }
  return out;
}

// FSDP under a pipeline and HSDP are FSDP2's (spec/strategy.hpp): zero3 takes pp > 1 and dp_shard < dp only with it.
bool fsdp2_zero3(const Experiment& ex, Strategy s) {
  return s == Strategy::zero3 && ex.framework.value_or(Framework::fsdp2) == Framework::fsdp2;
}

// The dp_shard values a plan tries: 0 (every dp group shards: plain FSDP) and, for zero3 under FSDP2, HSDP with
// every divisor of dp below it whose shard group z*cp*dp_shard has 2 GPUs or more.
std::vector<int> dp_shards(const Experiment& ex, const ParallelSpec& p) {
  std::vector<int> out{0};
  if (!fsdp2_zero3(ex, p.strategy)) return out;
  for (int d : divisors(p.dp))
    if (d < p.dp && p.z * p.cp * d >= 2) out.push_back(d);
  return out;
}

// The intra-node group sizes a strategy tries (tp for 3D, z for the ZeRO-3 strategies, 1 otherwise).
std::vector<int> inner_sizes(const Experiment& ex, Strategy s) {
  const ModelSpec& m = ex.model;
  const int g = ex.cluster.gpus_per_node;
  const StrategyTraits& t = traits(s);
  if (t.tensor_parallel) {
    std::vector<int> out;
    for (int tp : divisors(g))
      if (m.heads % tp == 0 && m.kv_heads_or_heads() % tp == 0 && m.ffn() % tp == 0) out.push_back(tp);
    return out;
  }
  if (!t.zero3_group) return {1};
  return divisors_from(g, 2);
}

// The (tp, z) intra-node groups a strategy tries: tp sizes for 3D, z sizes for the ZeRO-3 strategies; pure ZeRO-3
// also with every tp >= 2 (FSDP2 + TP, z = 1) when the plan's framework is FSDP2's.
std::vector<std::pair<int, int>> inner_groups(const Experiment& ex, Strategy s) {
  std::vector<std::pair<int, int>> out;
  if (s == Strategy::zero3) {
    // Pure ZeRO-3 shards over every data-parallel GPU; written z = one node (or fewer GPUs), dp = the rest.
    out.emplace_back(1, std::min(ex.cluster.gpus_per_node, ex.gpus));
    if (ex.framework.value_or(Framework::fsdp2) == Framework::fsdp2)
      for (int tp : inner_sizes(ex, Strategy::three_d))
        if (tp > 1) out.emplace_back(tp, 1);
    return out;
  }
  const bool tp_inner = traits(s).tensor_parallel;
  for (int inner : inner_sizes(ex, s)) out.emplace_back(tp_inner ? inner : 1, tp_inner ? 1 : inner);
  return out;
}

// Tensor-parallel communication: with tp > 1 sequence parallelism on, on with the TP communication overlapped where
// the plan's framework runs an overlap on this GPU (spec/framework.hpp: Megatron's userbuffers on compute
// capability 9.0+, torchtitan's async TP; it needs SP), and off; without tp neither.
struct TpComm {
  bool sequence_parallel;
  TpCommOverlap overlap;
};
std::vector<TpComm> tp_comms(Framework framework, const ClusterSpec& cluster) {
  std::vector<TpComm> out = {{true, TpCommOverlap::none}};
  const TpCommOverlap kind = framework_tp_overlap(framework);
  if (kind != TpCommOverlap::none && tp_overlap_unavailable(kind, cluster).empty()) out.push_back({true, kind});
  out.push_back({false, TpCommOverlap::none});
  return out;
}
const std::vector<TpComm> kNoTp = {{false, TpCommOverlap::none}};

// (schedule, v) pairs for a strategy at pipeline depth pp.
struct ScheduleChoice {
  ScheduleKind kind;
  int v;
};

std::vector<ScheduleChoice> schedule_choices(Strategy s, int pp, int L, int max_v) {
  std::vector<ScheduleChoice> out;
  if (max_v == 0) max_v = (L + 2) / pp;  // no cut: a split needs pp v <= L + 2 (stage_splits.hpp)
  const auto fits = [&](int v) { return !stage_splits(L, pp, v).empty(); };
  if (is_zeropp(s)) {
    for (int v = 1; v <= (pp > 1 ? max_v : 1); ++v)
      if (fits(v)) out.push_back({ScheduleKind::zeropp, v});
    return out;
  }
  if (pp == 1) return {{ScheduleKind::one_f_one_b, 1}};
  for (ScheduleKind k : {ScheduleKind::one_f_one_b, ScheduleKind::zb_h1, ScheduleKind::zb_h2, ScheduleKind::gpipe})
    if (s != Strategy::zero3 || (k != ScheduleKind::zb_h1 && k != ScheduleKind::zb_h2))  // FSDP under PP: no ZB
      out.push_back({k, 1});
  for (int v = 2; v <= max_v; ++v)
    if (fits(v)) out.push_back({ScheduleKind::interleaved, v});
  for (int v = 1; v <= max_v; ++v)
    if (fits(v)) out.push_back({ScheduleKind::bfs, v});
  return out;
}

void check(const Experiment& ex, const SpaceOptions& options) {
  validate(ex);
  if (options.max_v < 0)
    throw SpecError("search.max_v", fmt::format("search.max_v={} must be >= 1 (0: no cut)", options.max_v));
  if (options.max_micro_batch < 0)
    throw SpecError("search.max_micro_batch",
                    fmt::format("search.max_micro_batch={} must be >= 1 (0: no cut)", options.max_micro_batch));
  if (options.min_cp_tokens < 1)
    throw SpecError("search.min_cp_tokens",
                    fmt::format("search.min_cp_tokens={} must be >= 1", options.min_cp_tokens));
  // An FP8 recipe every searched strategy's framework must run (spec/fp8.hpp).
  for (Strategy strategy : options.strategies.empty() ? all_strategies() : options.strategies) {
    ParallelSpec p;
    p.strategy = strategy;
    p.framework = ex.framework;
    p.dtype = ex.dtype;
    p.fp8 = ex.fp8;
    p.fp8_recipe = ex.fp8_recipe;
    validate_fp8(p, ex.cluster, "experiment");
  }
  // Bounded like the plans they generate.
  check_at_most("search", "max_v", options.max_v, limits::kLayers);
  check_at_most("search", "max_micro_batch", options.max_micro_batch, limits::kMicroBatch);
}

}  // namespace

std::vector<Recompute> recompute_choices(const Experiment& ex) {
  // Under FlashAttention selective recomputation has nothing to drop (no s x s tensor is stored; flops.hpp): the
  // plan would be `none` twice.
  if (ex.model.attention_kind() == AttentionKind::flash) return {Recompute::none, Recompute::full};
  return {Recompute::none, Recompute::selective, Recompute::full};
}

void for_each_layout(const Experiment& ex, const SpaceOptions& options,
                     const std::function<void(Plan&, int units)>& visit) {
  check(ex, options);
  const std::vector<Strategy> strategies = options.strategies.empty() ? all_strategies() : options.strategies;
  const int N = ex.gpus, L = ex.model.layers;
  const long long G = ex.global_batch;

  Plan plan;
  plan.model = ex.model;
  plan.cluster = ex.cluster;
  ParallelSpec& p = plan.parallel;
  p.dtype = ex.dtype;
  p.framework = ex.framework;
  p.attention_kernel = ex.attention_kernel;  // absent: each plan's framework's (spec/attention_kernel.hpp)
  p.fp8 = ex.fp8;  // every plan in FP8 when the experiment says so (spec/fp8.hpp)
  p.fp8_recipe = ex.fp8_recipe;

  for (Strategy s : strategies) {
    const StrategyTraits& t = traits(s);
    p.strategy = s;
    for (const auto& [group_tp, group_z] : inner_groups(ex, s)) {
      const int inner = group_tp * group_z;
      if (inner > N || N % inner != 0) continue;
      for (const auto [cp, cp_kind] : cp_choices(ex, options, N / inner, group_tp)) {
      p.cp = cp;
      p.cp_kind = cp_kind;
      // Every pipeline depth the GPUs allow with a layer or more per rank; the layers need not divide evenly
      // (stage_splits.hpp). zero3 runs a pipeline only under FSDP2.
      const bool pipeline = t.pipeline && (s != Strategy::zero3 || fsdp2_zero3(ex, s));
      for (int pp : (pipeline ? divisors(N / (inner * cp)) : std::vector<int>{1})) {
        if (pp > L) break;
        p.tp = group_tp;
        p.z = group_z;
        p.pp = pp;
        p.dp = N / (inner * cp * pp);
        const long long pipelines = static_cast<long long>(p.z) * p.dp;
        if (G % pipelines != 0) continue;
        // Every b with b * pipelines dividing G: the divisors of G / pipelines (up to the cut, if any).
        std::vector<int> micro_batches;
        for (long long b = 1; b * b <= G / pipelines; ++b) {
          if ((G / pipelines) % b != 0) continue;
          micro_batches.push_back(static_cast<int>(b));
          if (b * b != G / pipelines) micro_batches.push_back(static_cast<int>(G / pipelines / b));
        }
        std::sort(micro_batches.begin(), micro_batches.end());
        for (int dp_shard : dp_shards(ex, p)) {
        p.dp_shard = dp_shard;
        for (int stage = t.min_zero_stage; stage <= t.max_zero_stage; ++stage) {
          p.zero_stage = stage;
          for (const TpComm& tc : p.tp > 1 ? tp_comms(framework_of(p), ex.cluster) : kNoTp) {
            p.sequence_parallel = tc.sequence_parallel;
            p.tp_comm_overlap = tc.overlap;
            for (const ScheduleChoice& sc : schedule_choices(s, pp, L, options.max_v)) {
              p.schedule = sc.kind;
              p.v = sc.v;
              for (const StageSplit& split : stage_splits(L, pp, sc.v)) {
              p.first_stage_layers = split.first_stage_layers;
              p.last_stage_layers = split.last_stage_layers;
              for (int b : micro_batches) {
                if (options.max_micro_batch > 0 && b > options.max_micro_batch) break;
                if (b > limits::kMicroBatch) break;
                const long long B = G / (b * pipelines);
                if (B > (1 << 20)) continue;  // int-sized and far beyond any real iteration
                if (!schedule::within_action_budget(pp, sc.v, static_cast<int>(B))) continue;  // too big to simulate
                if (sc.kind == ScheduleKind::interleaved && B % pp != 0) continue;  // Megatron's interleaving rule
                p.micro_batch = b;
                p.micro_batches = static_cast<int>(B);
                // U: every size 1..B for the zeropp schedule (ragged last unit allowed), else 1. FSDP2's FP8
                // all-gather of the linear weights both ways where the plan can run it.
                for (bool fp8_all_gather : fp8_all_gather_choices(p)) {
                  p.fp8_all_gather = fp8_all_gather;
                  visit(plan, sc.kind == ScheduleKind::zeropp ? static_cast<int>(B) : 1);
                }
                p.fp8_all_gather = false;
              }
              }
            }
          }
        }
        }
      }
      }
    }
  }
}

void for_each_plan(const Experiment& ex, const SpaceOptions& options, const std::function<void(const Plan&)>& visit) {
  const std::vector<Recompute> recomputes = recompute_choices(ex);
  for_each_layout(ex, options, [&](Plan& plan, int units) {
    ParallelSpec& p = plan.parallel;
    for (int U = 1; U <= units; ++U) {
      p.unit = U;
      for (Recompute rc : recomputes) {
        p.recompute = rc;
        if (!options.filter || options.filter(p)) visit(plan);
      }
    }
  });
}

std::int64_t count_plans(const Experiment& experiment, const SpaceOptions& options) {
  std::int64_t n = 0;
  if (options.filter) {
    for_each_plan(experiment, options, [&](const Plan&) { ++n; });
  } else {  // without a filter, in closed form: a layout is its units times the recompute choices
    const auto choices = static_cast<std::int64_t>(recompute_choices(experiment).size());
    for_each_layout(experiment, options, [&](Plan&, int units) { n += std::int64_t{units} * choices; });
  }
  return n;
}

}  // namespace zeropp::search
