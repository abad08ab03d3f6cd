#include "cost_model/analytic/fp8_cost.hpp"

#include <algorithm>

#include "cost_model/analytic/op_time.hpp"
#include "cost_model/analytic/params.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::analytic {

namespace {

constexpr double kFp8Bytes = 1;  // an E4M3 or E5M2 element
constexpr double kFp32Bytes = 4;
// FP8 tensors of one TransformerEngine linear layer with an fp8_meta entry (module/base.py: forward input, weight,
// output; backward grad output, grad input).
constexpr double kTeFp8TensorsPerLinear = 5;
constexpr double kLinearsPerLayer = 4;  // QKV, projection, MLP up (with gate), MLP down

// The weight casts of one layer per micro-batch, as a share of one cast of all its weights (TE, fp8.hpp): Megatron
// passes is_first_microbatch and casts once per step; the other frameworks cast at every forward. (Not per ZeroPP
// unit: the search shares one cost table across units, search.cpp CostsCache, and no ZeroPP code caching FP8
// weights over a unit is known.)
double te_weight_casts_per_micro_batch(const ParallelSpec& p) {
  return framework_of(p) == Framework::megatron ? 1.0 / p.micro_batches : 1.0;
}

double linear_share_of_layer(const Plan& plan) {
  const LayerGemms g = layer_gemms(plan.model, 1, plan.parallel.tp);
  const double layer = static_cast<double>(layer_params_per_tp_rank(plan.model, plan.parallel.tp).total());
  return layer > 0 ? linear_weight_elements(g) / layer : 0;
}

}  // namespace

double fp8_gemm_time(const ClusterSpec& cluster, const Gemm& g) {
  if (g.count <= 0 || g.flops_each() <= 0) return 0;
  const double rate = cluster.fp8_peak_flops * cluster.gpu->fp8_matmul_efficiency.value *
                      gemm_utilization(cluster, g.m, g.n, g.k, g.count);
  const double compute = g.flops() / rate;
  const double store = g.store_bytes > 0 ? g.store_bytes : element_bytes(Dtype::bf16);  // accumulated: flops.hpp
  return gemm_roofline(cluster, compute, kFp8Bytes * (g.m * g.k + g.k * g.n) * g.count, store * g.m * g.n * g.count);
}

double linear_weight_elements(const LayerGemms& g) {
  double n = 0;
  for (int i : {LayerGemms::qkv, LayerGemms::proj, LayerGemms::up, LayerGemms::down})
    n += g.gemm[i].k * g.gemm[i].n * g.gemm[i].count;
  return n;
}

Fp8CastBytes fp8_layer_cast_bytes(const Plan& plan, const LayerGemms& g) {
  const ParallelSpec& p = plan.parallel;
  const std::optional<Fp8Recipe> recipe = fp8_recipe_of(p);
  if (!recipe) return {};
  const Fp8RecipeTraits traits = fp8_traits(*recipe);
  const double e = element_bytes(p.dtype);
  const double a = traits.amax_pass ? e : 0;
  double x = 0, dy = 0;  // elements of the linear inputs and output gradients
  for (int i : {LayerGemms::qkv, LayerGemms::proj, LayerGemms::up, LayerGemms::down}) {
    const Gemm& m = g.gemm[i];
    x += m.m * m.k;  // the gate and the up projection share their input
    dy += m.m * m.n * m.count;
  }
  const double w = linear_weight_elements(g);
  Fp8CastBytes c;
  if (traits.transformer_engine) {
    const double per = a + e + 2 * kFp8Bytes;  // cast + transpose
    const double weights = per * w * te_weight_casts_per_micro_batch(p);
    c.forward = per * x + weights;
    c.backward = per * dy;
    return c;
  }
  const double per = a + e + kFp8Bytes;
  const double shard = p.fp8_all_gather ? data_parallel_sync(p).shard_group : 1;
  c.forward = per * x + per * w / shard;
  c.backward = 2 * per * dy + per * x + per * w / shard;
  return c;
}

double gather_wire_bytes_per_param(const Plan& plan, double param_bytes) {
  if (!plan.parallel.fp8 || !plan.parallel.fp8_all_gather) return param_bytes;
  const double f = linear_share_of_layer(plan);
  return param_bytes * (1 - f) + kFp8Bytes * f;
}

double held_bytes_per_gathered_param(const Plan& plan, double param_bytes) {
  const double wire = gather_wire_bytes_per_param(plan, param_bytes);
  const std::optional<Fp8Recipe> recipe = fp8_recipe_of(plan.parallel);
  if (!recipe || !fp8_traits(*recipe).transformer_engine) return wire;
  return wire + 2 * kFp8Bytes * linear_share_of_layer(plan);
}

double fp8_state_bytes(const Plan& plan, double layers) {
  const ParallelSpec& p = plan.parallel;
  const std::optional<Fp8Recipe> recipe = fp8_recipe_of(p);
  if (!recipe) return 0;
  const Fp8RecipeTraits traits = fp8_traits(*recipe);
  if (!traits.transformer_engine) return 0;  // torchao: scales computed per cast, nothing kept
  const double per_linear =
      kFp32Bytes * kTeFp8TensorsPerLinear * ((traits.amax_history ? kTeAmaxHistoryLen : 0) + 2.0);
  double bytes = layers * kLinearsPerLayer * per_linear;
  if (data_parallel_sync(p).gather == ParamGather::none)  // the cached FP8 weights and transposes, all step
    bytes += layers * 2 * kFp8Bytes * linear_weight_elements(layer_gemms(plan.model, 1, p.tp));
  return bytes;
}

bool fp8_saves_fp8_inputs(const ParallelSpec& p) {
  const std::optional<Fp8Recipe> recipe = fp8_recipe_of(p);
  return recipe && fp8_traits(*recipe).transformer_engine;
}

}  // namespace zeropp::analytic
