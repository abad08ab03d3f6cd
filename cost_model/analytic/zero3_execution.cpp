#include "cost_model/analytic/zero3_execution.hpp"

#include <algorithm>
#include <cmath>

#include "cost_model/analytic/fp8_cost.hpp"
#include "cost_model/analytic/grad_accumulation.hpp"
#include "cost_model/analytic/op_time.hpp"
#include "cost_model/analytic/params.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::analytic {

namespace {

// DeepSpeed's defaults (deepspeed/runtime/zero/config.py, DeepSpeedZeroConfig): prefetch_bucket_size (alias
// stage3_prefetch_bucket_size) 5e7 elements, reduce_bucket_size 5e8 elements.
constexpr double kDeepSpeedPrefetchBucket = 5e7;
constexpr double kDeepSpeedReduceBucket = 5e8;
// The bytes of the fp32 gradient / parameter shards both frameworks keep for the optimizer.
constexpr double kFp32 = 4;

// The modules with weights a DeepSpeed fetch hook gathers per transformer layer: Megatron-DeepSpeed's GPT layer
// (fused query-key-value, attention output, h -> 4h, 4h -> h: 4) or a Hugging Face Llama layer (q, k, v, o,
// gate, up, down projections: 7, transformers' modeling_llama.py LlamaAttention / LlamaMLP). Norms hold fewer
// than stage3_param_persistence_threshold = 1e5 elements and stay gathered (not fetched).
int weight_modules_per_layer(const ModelSpec& m) { return m.mlp == MlpKind::gelu ? 4 : 7; }

}  // namespace

Zero3CopyBytes zero3_copy_bytes(const Plan& plan, double params, double layer_params, int shard) {
  return zero3_copy_bytes(plan, params, layer_params, shard, framework_precision(plan.parallel),
                          grad_reductions(plan.parallel));
}

Zero3CopyBytes zero3_copy_bytes(const Plan& plan, double params, double layer_params, int shard,
                                const FrameworkPrecision& precision, const GradReductions& reductions) {
  const ParallelSpec& par = plan.parallel;
  const double e = element_bytes(precision.gather), r = element_bytes(precision.reduce);
  const double n = std::max(1, shard);
  // Of the plan's reduce-scatters per iteration, the share that adds into an existing gradient shard: all but the
  // first (grad_accumulation.hpp: R - 1 of R; none for FSDP2 under PP, whose one reduction follows the unsharded
  // accumulation).
  const double adds = (reductions.count - 1.0) / reductions.count;
  Zero3CopyBytes out;
  switch (framework_of(par)) {
    case Framework::fsdp2:
      out.gather_copy_in = params / n * (kFp32 + 3 * e);
      out.copy_out = params * 2 * e;
      out.reduce_copy_in = params * (e + r);
      out.reduce_side = adds * params / n * (r + 2 * kFp32);
      out.collectives_per_layer = 1;
      out.reduce_per_layer = true;
      break;
    case Framework::fsdp1:
      // FlatParameter FSDP: the low-precision shard cast on the unshard stream, gathered straight into the padded
      // flat parameter whose views the parameters are (no copy-out); the gradient cast to the reduce dtype on the
      // post-backward stream.
      out.gather_copy_in = params / n * (kFp32 + e);
      out.reduce_side = params * (e + r) + adds * params / n * (r + 2 * kFp32);
      out.collectives_per_layer = 1;
      out.reduce_per_layer = true;
      break;
    case Framework::deepspeed: {
      out.gather_copy_in = params / n * 2 * e;
      out.copy_out = params * 2 * e;
      out.reduce_side = params * 4 * e + params / n * (e + kFp32 + adds * 3 * kFp32);
      const double buckets = std::ceil(std::max(1.0, layer_params) / kDeepSpeedPrefetchBucket);
      out.collectives_per_layer =
          static_cast<int>(std::clamp(buckets, 1.0, static_cast<double>(weight_modules_per_layer(plan.model))));
      out.reduce_bucket_params = kDeepSpeedReduceBucket;
      break;
    }
    case Framework::megatron:
    case Framework::zeropp:
      break;
  }
  return out;
}

Zero3Seconds zero3_seconds(const Plan& plan, const Group& group, double params, double layer_params) {
  return zero3_seconds(plan, group, params, layer_params, framework_precision(plan.parallel),
                       grad_reductions(plan.parallel));
}

Zero3Seconds zero3_seconds(const Plan& plan, const Group& group, double params, double layer_params,
                           const FrameworkPrecision& precision, const GradReductions& reductions) {
  const ClusterSpec& c = plan.cluster;
  const double e = element_bytes(precision.gather), r = element_bytes(precision.reduce);
  const Zero3CopyBytes copies = zero3_copy_bytes(plan, params, layer_params, group.size, precision, reductions);
  Zero3Seconds out;
  // The gather as `pieces` equal all-gathers (FSDP2's per layer, DeepSpeed's per fetched module), each paying its
  // own latency; one collective for the unit where the framework has no finer rule.
  const double layers = layer_params > 0 ? std::max(1.0, std::round(params / layer_params)) : 1.0;
  const double pieces = std::max(1.0, layers * copies.collectives_per_layer);
  // FSDP2's FP8 all-gather moves the linear weights at one byte (fp8_cost.hpp); its casts' copies are not re-counted.
  const double wire = gather_wire_bytes_per_param(plan, e);
  out.gather = pieces * collective_time(c, Collective::all_gather, group.size, group.stride, wire * params / pieces) +
               memory_time(c, copies.gather_copy_in);
  // Gradients reduce-scattered per layer, or in buckets: a unit smaller than a bucket is its share of one bucket's
  // collective.
  const double rs_pieces = copies.reduce_per_layer ? layers : 1.0;
  double reduce =
      rs_pieces * collective_time(c, Collective::reduce_scatter, group.size, group.stride, r * params / rs_pieces);
  if (copies.reduce_bucket_params > 0 && params > 0) {
    const double bucket = copies.reduce_bucket_params;
    reduce = params / bucket * collective_time(c, Collective::reduce_scatter, group.size, group.stride, r * bucket);
  }
  out.reduce_scatter = reduce + memory_time(c, copies.reduce_side);
  out.forward_copies = memory_time(c, copies.copy_out);
  out.backward_copies = memory_time(c, copies.copy_out + copies.reduce_copy_in);
  return out;
}

}  // namespace zeropp::analytic
