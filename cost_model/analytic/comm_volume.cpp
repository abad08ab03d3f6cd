#include "cost_model/analytic/comm_volume.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "cost_model/analytic/fp8_cost.hpp"
#include "cost_model/analytic/params.hpp"
#include "cost_model/spec/context_parallel.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::analytic {

double zeropp_elements_per_layer(int h, int B, int U, GradReduce mode) {
  const double h2 = static_cast<double>(h) * h;
  const double units = static_cast<double>(B) / U;
  // A layer holds 12h^2 parameters: two gathers per unit, one reduce-scatter per unit or per micro-batch.
  if (mode == GradReduce::per_unit) return 3.0 * 12.0 * h2 * units;
  return 2.0 * 12.0 * h2 * units + 12.0 * h2 * B;
}

double tp_elements_per_layer(int B, int s, int b, int h) { return 8.0 * B * static_cast<double>(s) * b * h; }

int unit_count(int B, int U) {
  if (B < 1) throw SpecError("parallel.micro_batches", fmt::format("parallel.micro_batches={} must be >= 1", B));
  if (U < 1) throw SpecError("parallel.unit", fmt::format("parallel.unit={} must be >= 1", U));
  return (B + U - 1) / U;
}

namespace {

// (n-1)/n: the share of a ring all-gather's or reduce-scatter's buffer each GPU sends.
double ring_share(int n) { return n > 1 ? static_cast<double>(n - 1) / n : 0.0; }

// Everything in a plan's traffic that does not depend on the PP rank, worked out once: the rank only changes
// how many parameters it holds (embedding on the first, head on the last), which edges of the TP and p2p
// traffic it has, and whether it syncs a tied embedding. Every parameter-driven term is linear in Psi.
struct PlanComm {
  int p = 1, v = 1;
  StageLayout layout;                                     // layers per virtual stage
  double psi_per_layer = 0, embedding_psi = 0, head_psi = 0;  // per TP rank
  double tp_per_layer = 0, tp_scale = 0;  // TP bytes of one layer of the rank: tp_per_layer x tp_scale
  double tp_edge = 0;      // TP bytes of the embedding (first rank) or the LM head (last rank)
  double cp_per_layer = 0;  // CP bytes of one layer, all micro-batches
  double pp_per_send = 0;  // bytes of one send per micro-batch, all micro-batches
  double zero_per_param = 0;
  // ZeroPP keeps a rank's last chunk gathered from its last forward into its first backward of a unit (no
  // chunk switch in between), so that chunk is gathered once per unit, not twice: its own factor.
  double zero_last_chunk_per_param = 0;
  double dp_per_param = 0;
  double tied_sync = 0;  // bytes of the tied-embedding gradient all-reduce, first and last rank
};

PlanComm plan_comm(const Plan& plan, const PlanBasics& basics) {
  const ModelSpec& m = plan.model;
  const ParallelSpec& par = plan.parallel;
  const int p = par.pp, v = par.v, t = par.tp, B = par.micro_batches;
  const double e = element_bytes(par.dtype);
  std::optional<ModelSpec> cp_copy;
  const ModelSpec& local = cp_rank_model(m, par.cp, cp_copy);  // a CP rank's s/cp tokens
  const double bsh = static_cast<double>(par.micro_batch) * local.seq_len * m.hidden;
  PlanComm c;
  c.p = p;
  c.v = v;
  const PipelineParams& params = basics.params;
  c.layout = params.layout;
  c.psi_per_layer = static_cast<double>(params.per_layer);
  c.embedding_psi = static_cast<double>(params.embedding);
  c.head_psi = static_cast<double>(params.head);

  // Tensor parallelism: 4 all-reduces (or AG/RS pairs) of b*s*h per layer per micro-batch, 6 with full
  // recompute; the vocabulary-parallel embedding (forward) and LM head input (backward) add one each.
  if (t > 1) {
    const double per_layer = (par.recompute == Recompute::full ? 12.0 : 8.0) * bsh;
    const double scale = B * e * ring_share(t);
    c.tp_per_layer = per_layer;
    c.tp_scale = scale;
    c.tp_edge = 2.0 * bsh * scale;
  }

  // Context parallelism (spec/context_parallel.hpp), per layer and micro-batch. Ring: the forward passes the rank's
  // K and V block on cp-1 times, the backward passes it with its gradient (2x) cp-1 times and returns the last
  // dKV, and a full recompute passes it again: (3cp-2) blocks, (4cp-3) with full recompute. Ulysses: each
  // all-to-all sends (cp-1)/cp of its buffer; Q, K, V and the output, forward and backward (and the forward's
  // again with full recompute).
  if (par.cp > 1) {
    const double cp = par.cp;
    const double tokens = static_cast<double>(par.micro_batch) * local.seq_len;
    const double kv_width = static_cast<double>(m.kv_heads_or_heads()) * m.head_dim() / t;
    const double forwards = par.recompute == Recompute::full ? 2 : 1;
    if (par.cp_kind == CpKind::ring) {
      const double kv = 2 * tokens * kv_width * e;
      c.cp_per_layer = B * kv * ((cp - 1) * forwards + 2 * (cp - 1) + 1);
    } else {
      const double pass = tokens * (2.0 * m.hidden / t + 2 * kv_width) * e * (cp - 1) / cp;
      c.cp_per_layer = B * pass * (forwards + 1);
    }
  }

  // Pipeline p2p: b*s*h/t per send (split over the TP ranks), every micro-batch.
  if (p > 1) c.pp_per_send = (bsh / t) * e * B;

  // Data-parallel and ZeRO traffic per parameter held, by the strategy's data-parallel picture: gradients
  // travel in the framework's reduce dtype (grad_bytes), parameters in the compute dtype (param_bytes).
  const DataParallelSync& d = basics.sync;
  const FrameworkPrecision& precision = basics.precision;
  const double grad_bytes = element_bytes(precision.reduce), param_bytes = element_bytes(precision.gather);
  // ZeRO-3 gathers of an FP8 plan with fp8_all_gather move the linear weights at 1 byte (fp8_cost.hpp; the layers'
  // mix, applied to the embedding too); param_bytes otherwise.
  const double gather_bytes = gather_wire_bytes_per_param(plan, param_bytes);
  // A DP sync sends the gradient twice (all-reduce), or once and the updated parameters once (ZeRO-1).
  const double dp_sync = d.mode == DpSyncMode::reduce_scatter ? grad_bytes + param_bytes : 2.0 * grad_bytes;
  if (d.gather == ParamGather::none) {
    // Replicated stages: all-reduce, or reduce-scatter + all-gather, of the whole gradient across the replicas.
    c.dp_per_param = dp_sync * ring_share(d.replicas);
  } else if (d.shard_spans_dp) {
    // zero3 without PP: gather for F, gather for B, reduce-scatter after W, every micro-batch, in the shard group;
    // under PP (FSDP2 with reshard_after_forward off): one gather and one reduce-scatter per iteration.
    const double passes = d.layer_wise ? B : 1;
    c.zero_per_param = passes * ((d.layer_wise ? 2.0 : 1.0) * gather_bytes + grad_bytes) * ring_share(d.shard_group);
    // HSDP: each reduce-scattered shard all-reduced across the replicas (every micro-batch without PP).
    c.dp_per_param = (d.sync_every_micro_batch ? B : 1) * 2.0 * grad_bytes / d.shard_group * ring_share(d.replicas);
  } else {
    const int z = par.z;
    double gathers = 2.0 * B, reduces = B;  // naive: per micro-batch
    double last_chunk_gathers = gathers;
    if (d.gather == ParamGather::per_unit) {
      const int units = unit_count(B, std::min(par.unit, B));
      reduces = par.grad_reduce == GradReduce::per_unit ? units : B;
      gathers = 2.0 * units;
      last_chunk_gathers = units;
    }
    c.zero_per_param = (gathers * gather_bytes + reduces * grad_bytes) * ring_share(z);
    c.zero_last_chunk_per_param = (last_chunk_gathers * gather_bytes + reduces * grad_bytes) * ring_share(z);
    // Across nodes, each GPU's shard: all-reduce (hybrid A) or reduce-scatter + all-gather (hybrid B).
    c.dp_per_param = dp_sync / z * ring_share(par.dp);
  }
  if (d.gather != ParamGather::per_unit) c.zero_last_chunk_per_param = c.zero_per_param;

  // A tied embedding split over the first and last stage: Megatron all-reduces the two copies' gradients
  // (2 ranks: each sends its buffer once), on the shard when ZeRO-3 splits it.
  if (m.tied_embedding && p > 1) c.tied_sync = static_cast<double>(m.vocab) * m.hidden / t / d.shard_group * grad_bytes;
  return c;
}

CommBytes rank_comm(const PlanComm& c, int r) {
  const bool holds_first = r == 0;
  const bool holds_last = r == c.p - 1;
  const double layers = c.layout.rank_layers(r);
  const double layer_psi = layers * c.psi_per_layer;
  const double psi = layer_psi + (holds_first ? c.embedding_psi : 0) + (holds_last ? c.head_psi : 0);
  CommBytes out;
  out.tp = layers * c.tp_per_layer * c.tp_scale + (holds_first ? c.tp_edge : 0) + (holds_last ? c.tp_edge : 0);
  // Each chunk sends its activation forward and its gradient back, except off the ends of the pipeline:
  // virtual stage 0 (chunk 0 of rank 0) sends no gradient, stage p*v-1 (chunk v-1 of rank p-1) no activation.
  const int sends = 2 * c.v - holds_first - holds_last;
  out.pp = c.p > 1 ? sends * c.pp_per_send : 0;
  // The rank's last chunk (virtual stage (v-1)p + r); the embedding sits in chunk 0, the head in chunk v-1.
  const double last_chunk_psi = c.layout.stage_layers((c.v - 1) * c.p + r) * c.psi_per_layer +
                                (holds_first && c.v == 1 ? c.embedding_psi : 0) + (holds_last ? c.head_psi : 0);
  out.zero = c.zero_per_param * (psi - last_chunk_psi) + c.zero_last_chunk_per_param * last_chunk_psi;
  out.dp = c.dp_per_param * psi + (holds_first || holds_last ? c.tied_sync : 0);
  out.cp = layers * c.cp_per_layer;
  out.total = out.tp + out.pp + out.dp + out.zero + out.cp;
  return out;
}

}  // namespace

CommBytes comm_bytes(const Plan& plan, int pp_rank) {
  if (pp_rank < 0 || pp_rank >= plan.parallel.pp) {
    throw SpecError("parallel.pp", fmt::format("PP rank {} is outside [0, pp = {})", pp_rank, plan.parallel.pp));
  }
  return rank_comm(plan_comm(plan, plan_basics(plan)), pp_rank);
}

CommBytes comm_bytes(const Plan& plan) { return comm_bytes(plan, plan_basics(plan)); }

CommBytes comm_bytes(const Plan& plan, const PlanBasics& basics) {
  // The middle ranks are all alike; only the first and the last hold more (embedding, head) and send less.
  const PlanComm c = plan_comm(plan, basics);
  CommBytes best = rank_comm(c, 0);
  for (const int r : {c.p / 2, c.p - 1}) {
    if (r <= 0) continue;
    const CommBytes rc = rank_comm(c, r);
    if (rc.total > best.total) best = rc;
  }
  return best;
}

}  // namespace zeropp::analytic
