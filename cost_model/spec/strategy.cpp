#include "cost_model/spec/strategy.hpp"

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp {
namespace {

constexpr StrategyTraits make_traits(Strategy s) {
  StrategyTraits t;
  switch (s) {
    case Strategy::three_d:
      t.tensor_parallel = true;
      t.zero_stage_rule = "pipeline parallelism takes ZeRO stage 0 or 1 (distributed optimizer)";
      break;
    case Strategy::pp_zero1:
      t.zero_stage_rule = "pipeline parallelism takes ZeRO stage 0 or 1";
      break;
    case Strategy::zero3:
      t.zero3_group = true;
      // FSDP2 with tensor parallelism inside the node: torchtitan's 2-D parallelism (fully_shard over the
      // data-parallel mesh dimension of a DTensor-parallelised model); z is then 1 and dp every TP group's copy.
      t.tensor_parallel = true;
      // FSDP2 under a pipeline (torchtitan's 3-D with TP): framework fsdp2 only (validate_strategy), gathered per
      // iteration (data_parallel_sync).
      t.pipeline = true;
      t.gather = ParamGather::per_micro_batch;
      t.default_zero_stage = t.min_zero_stage = t.max_zero_stage = 3;
      t.zero_stage_rule = "pure ZeRO-3 is stage 3";
      t.framework = Framework::fsdp2;
      break;
    case Strategy::zero3_pp:
      t.zero3_group = true;
      t.gather = ParamGather::per_micro_batch;
      t.zero_stage_rule = "the dp dimension takes ZeRO stage 0 or 1 (ZeRO-3 is the z group)";
      t.framework = Framework::deepspeed;
      break;
    case Strategy::zeropp_a:
      t.zeropp = t.zero3_group = true;
      t.gather = ParamGather::per_unit;
      t.default_zero_stage = t.min_zero_stage = t.max_zero_stage = 0;
      t.zero_stage_rule = "hybrid A all-reduces gradients across dp (zero_stage 0)";
      t.framework = Framework::zeropp;
      break;
    case Strategy::zeropp_b:
      t.zeropp = t.zero3_group = true;
      t.gather = ParamGather::per_unit;
      t.default_zero_stage = t.min_zero_stage = t.max_zero_stage = 1;
      t.zero_stage_rule = "hybrid B uses ZeRO-1 across dp (zero_stage 1)";
      t.framework = Framework::zeropp;
      break;
  }
  return t;
}

// What a plan would be told when a value contradicts its strategy.
[[noreturn]] void not_with_strategy(const std::string& field, const char* key, int value, Strategy s,
                                    const char* rule) {
  throw SpecError(field + "." + key, fmt::format("{0}.{1}={2} is not allowed with {0}.strategy={3}: {4}", field, key,
                                                 value, to_string(s), rule));
}

const char* no_tp_rule(Strategy s) {
  switch (s) {
    case Strategy::pp_zero1:
      return "PP + ZeRO-1 has no tensor parallelism";
    default:
      return "ZeRO-3 under PP is TP-free (tp must be 1)";
  }
}

const char* no_z_rule(Strategy s) {
  return s == Strategy::three_d ? "3D has no ZeRO-3 group (z must be 1)"
                                : "PP + ZeRO-1 has no ZeRO-3 group (z must be 1)";
}

// FSDP under a pipeline and HSDP are FSDP2's (torchtitan's); the schedules its pipeline runs that are modelled.
void validate_fsdp(const ParallelSpec& p, const std::string& field) {
  const Framework f = framework_of(p);
  if (p.pp > 1 && f != Framework::fsdp2)
    throw SpecError(field + ".pp", fmt::format("{0}.pp={1} with {0}.strategy=zero3 needs {0}.framework=fsdp2 (FSDP "
                                               "under a pipeline is torchtitan's; {0}.framework={2} is not: ZeRO-3 "
                                               "under PP in DeepSpeed's manner is strategy zero3_pp)",
                                               field, p.pp, to_string(f)));
  if (p.pp > 1 && (p.schedule == ScheduleKind::zb_h1 || p.schedule == ScheduleKind::zb_h2))
    throw SpecError(field + ".schedule",
                    fmt::format("{0}.schedule={1} is not allowed with {0}.strategy=zero3 and {0}.pp={2}: FSDP under "
                                "PP runs gpipe, 1f1b, interleaved or bfs here (torchtitan's zero-bubble schedules "
                                "are interleaved or V-shaped, not modelled)",
                                field, to_string(p.schedule), p.pp));
  if (p.dp_shard == 0) return;
  if (p.dp % p.dp_shard != 0)
    throw SpecError(field + ".dp_shard", fmt::format("{0}.dp_shard={1} does not divide {0}.dp={2} (HSDP: dp/dp_shard "
                                                     "replicas of each shard group)",
                                                     field, p.dp_shard, p.dp));
  if (p.dp_shard < p.dp && f != Framework::fsdp2)
    throw SpecError(field + ".dp_shard", fmt::format("{0}.dp_shard={1} < {0}.dp={2} (HSDP) needs {0}.framework=fsdp2 "
                                                     "(FSDP2's hybrid sharding; {0}.framework={3} is not)",
                                                     field, p.dp_shard, p.dp, to_string(f)));
  if (p.z * p.cp * p.dp_shard < 2)
    throw SpecError(field + ".dp_shard",
                    fmt::format("{0}.dp_shard={1} leaves a shard group of one GPU (z*cp*dp_shard = 1): nothing is "
                                "sharded (that is DDP, not FSDP)",
                                field, p.dp_shard));
}

}  // namespace

// Built at compile time (constant initialisation): no initialisation guard on a path every plan evaluation takes
// many times.
constexpr StrategyTraits kStrategyTraits[6] = {make_traits(Strategy::three_d),  make_traits(Strategy::zero3),
                                               make_traits(Strategy::pp_zero1), make_traits(Strategy::zero3_pp),
                                               make_traits(Strategy::zeropp_a), make_traits(Strategy::zeropp_b)};
static_assert(static_cast<int>(Strategy::zeropp_b) == 5, "one row per Strategy, in enum order");

void invalid_strategy(Strategy s) {
  throw SpecError("parallel.strategy", fmt::format("invalid strategy value {}", static_cast<int>(s)));
}

ScheduleKind default_schedule(Strategy s, int v) {
  if (is_zeropp(s)) return ScheduleKind::zeropp;
  return v > 1 ? ScheduleKind::interleaved : ScheduleKind::one_f_one_b;
}

bool runs_schedule(Strategy s, ScheduleKind k) { return is_zeropp(s) == (k == ScheduleKind::zeropp); }

DataParallelSync data_parallel_sync(const ParallelSpec& p) {
  const StrategyTraits& t = traits(p.strategy);
  DataParallelSync d;
  d.gather = t.gather;
  // Every data-parallel copy of a stage; CP ranks hold the same parameters and sync with them (Megatron's
  // data-parallel group with context parallelism, torchtitan's FSDP mesh over dp x cp).
  const int all = p.z * p.dp * p.cp;
  if (t.gather == ParamGather::none) {
    // Replicated stages: the whole gradient across every copy; a distributed optimizer shards the states.
    d.replicas = all;
    d.replicas_span_z = true;
    d.mode = all > 1 ? (p.zero_stage >= 1 ? DpSyncMode::reduce_scatter : DpSyncMode::all_reduce) : DpSyncMode::none;
    d.optimizer_shards = p.zero_stage >= 1 ? all : 1;
  } else if (p.strategy == Strategy::zero3) {
    // One ZeRO-3 group over the z (or TP-rank) GPUs, their CP ranks and dp_shard of the dp groups (all of them
    // without HSDP): gradients are reduce-scattered inside it, and all-reduced across the dp/dp_shard replicas of
    // the group (HSDP). Without PP an FSDP unit (a layer) at a time per micro-batch; under PP per iteration.
    const int shard = dp_shard_of(p);
    d.shard_group = p.z * p.cp * shard;
    d.shard_spans_dp = true;
    d.layer_wise = p.pp == 1;
    if (p.pp > 1) d.gather = ParamGather::per_iteration;
    d.grad_shard = d.shard_group;
    d.optimizer_shards = d.shard_group;
    d.replicas = p.dp / shard;
    d.mode = d.replicas > 1 ? DpSyncMode::all_reduce : DpSyncMode::none;
    d.sync_every_micro_batch = d.layer_wise && d.replicas > 1;
  } else {
    // ZeRO-3 in the z group; the shard is synchronised across the dp copies of that group.
    d.shard_group = p.z;
    d.grad_shard = p.z;
    d.replicas = p.dp * p.cp;
    const bool sharded_optimizer = p.zero_stage >= 1;  // hybrid B, zero3_pp with ZeRO-1 across dp
    d.mode = d.replicas > 1 ? (sharded_optimizer ? DpSyncMode::reduce_scatter : DpSyncMode::all_reduce)
                            : DpSyncMode::none;
    d.optimizer_shards = sharded_optimizer ? all : p.z;
  }
  if (d.mode == DpSyncMode::none) d.replicas = 1;
  return d;
}

void validate_strategy(const ParallelSpec& p, const std::string& field) {
  const StrategyTraits& t = traits(p.strategy);
  if (p.tp > 1 && !t.tensor_parallel) not_with_strategy(field, "tp", p.tp, p.strategy, no_tp_rule(p.strategy));
  if (p.z > 1 && !t.zero3_group) not_with_strategy(field, "z", p.z, p.strategy, no_z_rule(p.strategy));
  // Only FSDP2 (torchtitan) shards a tensor-parallel model with ZeRO-3; the other frameworks' ZeRO-3 is TP-free.
  if (p.strategy == Strategy::zero3 && p.tp > 1 && framework_of(p) != Framework::fsdp2)
    throw SpecError(field + ".tp", fmt::format("{0}.tp={1} with {0}.strategy=zero3 needs {0}.framework=fsdp2 (FSDP "
                                               "with TP is torchtitan's 2-D parallelism; {0}.framework={2} is not)",
                                               field, p.tp, to_string(framework_of(p))));
  if (p.pp > 1 && !t.pipeline)
    not_with_strategy(field, "pp", p.pp, p.strategy, "pure ZeRO-3 has no pipeline (pp must be 1)");
  if (p.strategy == Strategy::zero3) validate_fsdp(p, field);
  if (p.dp_shard > 0 && p.strategy != Strategy::zero3)
    not_with_strategy(field, "dp_shard", p.dp_shard, p.strategy,
                      "HSDP (a shard group over part of dp) is FSDP2's, strategy zero3");
  if (p.zero_stage < t.min_zero_stage || p.zero_stage > t.max_zero_stage)
    not_with_strategy(field, "zero_stage", p.zero_stage, p.strategy, t.zero_stage_rule);
  if (!runs_schedule(p.strategy, p.schedule)) {
    const std::string rule = t.zeropp ? fmt::format("strategy {} runs the zeropp schedule", to_string(p.strategy))
                                      : "the zeropp schedule needs strategy zeropp_a or zeropp_b";
    throw SpecError(field + ".schedule", fmt::format("{0}.schedule={1} is not allowed with {0}.strategy={2}: {3}",
                                                     field, to_string(p.schedule), to_string(p.strategy), rule));
  }
}

std::vector<Strategy> all_strategies() {
  return {Strategy::three_d,  Strategy::zero3,    Strategy::pp_zero1,
          Strategy::zero3_pp, Strategy::zeropp_a, Strategy::zeropp_b};
}

}  // namespace zeropp
