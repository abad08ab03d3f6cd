#pragma once
// Memory per GPU in closed form: model states, activations, in-flight micro-batches per schedule, buffers.
// The simulator, not this file, is the authority for peaks over time; these are the textbook bounds.
//
// Model states, Adam: the parameters and the gradients held, at the element sizes of the plan's framework
// (spec/framework.hpp), plus fp32 momentum and variance and, when the parameters held are 16-bit, an fp32 master
// copy. The ZeRO paper's convention (DeepSpeed, ZeroPP; 16-bit gradients): 2 + 2 + 12 = 16 bytes per parameter;
// Megatron-LM with bf16 keeps fp32 gradients (main_grad): 2 + 4 + 12 = 18; FSDP2 keeps fp32 parameter and
// gradient shards, the parameters being the master: 4 + 4 + 8 = 16; plain fp32 training 4 + 4 + 8 = 16.
// Over N data-parallel ranks (Rajbhandari et al. 2020, "ZeRO"), with 16 bytes:
//   DP 16Psi; ZeRO-1 4Psi + 12Psi/N; ZeRO-2 2Psi + 14Psi/N; ZeRO-3 16Psi/N.
// Megatron with bf16 (megatron/training/theoretical_memory_usage.py): 18Psi; with its distributed optimizer
// (ZeRO-1) 6Psi + 12Psi/N. FSDP2 (ZeRO-3) 16Psi/N.
// ZeroPP, Psi_s the stage's parameters, z the ZeRO-3 group, d = dp: hybrid A (DP across nodes) 16Psi_s/z;
// hybrid B (ZeRO-1 across nodes) 4Psi_s/z + 12Psi_s/(z d).
//
// Activations per layer per micro-batch, 16-bit (Korthikanti et al. 2022, "Reducing Activation Recomputation
// in Large Transformer Models", section 4), GPT layer (MHA, gelu, f = 4h, dropout, unfused attention):
//   no parallelism  sbh(34 + 5as/h);  TP  sbh(10 + 24/t + 5as/(ht));  TP+SP  sbh(34/t + 5as/(ht));
//   selective recompute drops the 5as/h term; full recompute keeps only the layer input 2sbh (/t with SP).
// The code sums the stored tensors one by one, so GQA, other f, swiglu and FlashAttention follow; GPT reduces
// to the above:
//   attention: QKV input 2sbh, Q and K 2sb(h+q), V 2sbq, output-projection input 2sbh, dropout mask sbh;
//     unfused (the attention core): softmax output 2as^2b, dropout mask as^2b, dropout output 2as^2b;
//     flash: no s x s tensor, only the fp32 log-sum-exp 4asb (Q, K, V and the output, the projection input,
//     are counted above); attention dropout is regenerated in the backward from the RNG state, no mask;
//   MLP gelu: input 2sbh, activation input 2sbf, down input 2sbf, dropout mask sbh;
//   MLP swiglu (Llama, no dropout anywhere): input 2sbh, gate and up outputs 2sbf each, down input 2sbf;
//   norms: two inputs 2sbh each.
// 16-bit tensors scale with element_bytes(dtype)/2; dropout masks are 1 byte. Dropout follows the MLP kind
// as biases do (ModelSpec::has_dropout): GPT (gelu) has it, Llama (swiglu) has none (no masks; unfused, the
// softmax output only: 2as^2b). A flash Llama layer: sb(e(6h + 2q + 3f) + 4a), no s term at all.
// Selective recompute (Korthikanti: recompute the attention core) is what flash does in its own backward, so
// with flash it stores what `none` stores. Full recompute keeps the layer input either way.
// Without SP, TP replicates the layer-norm outputs (QKV and MLP inputs), the norm inputs and the dropout masks
// after the row-parallel layers; everything else (the log-sum-exp too: heads are split) is split t ways. With
// SP everything is split t ways.
//
// Split backward (Zero Bubble PP, Qi et al. 2023, Table 1): a micro-batch holds the full activation (M_B,
// sb(34h + 5as) for GPT) until its B, then only what W needs (M_W: the input and the output gradient of every
// weight matmul, 32sbh for GPT) until its W.
#include <vector>

#include "cost_model/analytic/plan_basics.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/framework.hpp"

namespace zeropp::analytic {

struct ModelStateBytes {
  double params = 0;
  double grads = 0;
  double optimizer = 0;
  double total() const { return params + grads + optimizer; }
};

// Bytes of each model state for ONE parameter under a framework's precision.
ModelStateBytes model_state_bytes_per_param(const FrameworkPrecision&);

// Psi parameters, ZeRO stage 0 (plain DP) .. 3 over n ranks (stage 1 shards the optimizer states, 2 also the
// gradients, 3 also the parameters), `per_param` bytes per parameter. Throws SpecError("parallel.zero_stage")
// outside 0..3 and SpecError("parallel.dp") for n < 1.
ModelStateBytes zero_model_states(double psi, int zero_stage, int n, const ModelStateBytes& per_param);
// The same in the ZeRO paper's convention (framework deepspeed) for training dtype `dtype`.
ModelStateBytes zero_model_states(double psi, int zero_stage, int n, Dtype dtype = Dtype::bf16);
// ZeroPP with Psi_s stage parameters, ZeRO-3 over z in the node, and across d = dp nodes either replicated
// (hybrid A) or with the optimizer states sharded (hybrid B).
ModelStateBytes zeropp_model_states(double psi_stage, int z, int d, bool hybrid_b, const ModelStateBytes& per_param);
// The same with the ZeroPP framework's precision for training dtype `dtype`.
ModelStateBytes zeropp_model_states(double psi_stage, int z, int d, bool hybrid_b, Dtype dtype = Dtype::bf16);

struct ActivationOptions {
  int b = 1;                       // micro-batch size
  int tp = 1;                      // t
  bool sequence_parallel = false;  // SP (only meaningful with t > 1)
  Recompute recompute = Recompute::none;
  Dtype dtype = Dtype::bf16;
  // FP8 training with TransformerEngine: the linear layers' inputs are saved in FP8 (analytic/fp8_cost.hpp).
  bool fp8_inputs = false;
};

// Bytes one GPU stores for one layer and one micro-batch between its forward and its backward.
double activation_bytes_per_layer(const ModelSpec& model, const ActivationOptions& options);

// Split backward: bytes held until B (M_B, = activation_bytes_per_layer) and until W (M_W).
// With full recompute M_B is the stored input; M_W is unchanged (the recomputed tensors W needs live on).
struct SplitActivation {
  double until_b = 0;
  double until_w = 0;
};
SplitActivation split_activation_bytes_per_layer(const ModelSpec& model, const ActivationOptions& options);

// Per micro-batch extras outside the layers (Korthikanti et al. 2022, section 4.3): the first virtual stage
// keeps the embedding dropout mask (sbh/t bytes, GPT only); the last keeps the final norm input 2sbh/t, the
// LM head input 2sbh/t and the fp32 logits of the vocabulary-parallel cross-entropy 4sbV/t, i.e.
// 4sbh/t*(1 + V/h) at 16 bits.
double first_stage_extra_activation_bytes(const ModelSpec& model, const ActivationOptions& options);
double last_stage_extra_activation_bytes(const ModelSpec& model, const ActivationOptions& options);

// Peak number of (chunk, micro-batch) activation sets held at once on PP rank r (0-based) of p, v chunks per
// rank, B micro-batches per iteration, U the scheduling unit (ZeroPP). Closed forms, each capped at the
// number of chunk micro-batches that exist:
//   gpipe        B                        (all forwards before any backward)
//   one_f_one_b  min(p - r, B)            (warm-up p-1-r forwards, then one more before the first backward)
//   interleaved  min((v-1)p + 2(p-1-r) + 1, B v)   (Megatron's warm-up + 1)
//   bfs          B v                      (looped breadth-first: every chunk's forwards before backwards)
//   zb_h1        min(p, B)                (B-memory units, Qi et al.: no more than 1F1B's rank 0)
//   zb_h2        min(2p - 1, B)
//   zeropp       min(2(p-1-r) + (v-1)U + 1, U v): the warm-up forwards of a unit, min(2(p-1-r) + (v-1)U, n),
//                plus the first steady-state forward, capped at the n = U v forward steps of a unit; memory
//                is released at the end of each unit, so it grows with U, not B (U is capped at B).
// Counts are in chunk micro-batches: the v = 1 schedules (gpipe, 1F1B, ZB) hold whole stages, i.e. the count
// above times v (v = 1 for them in practice). Throws SpecError for p, v, B, U < 1 or r outside [0, p).
int in_flight_chunk_microbatches(ScheduleKind kind, int p, int v, int r, int B, int U);

struct MemoryBytes {
  double params = 0;       // parameters held (sharded or not), 16-bit or fp32 by framework; with FP8, also what
                           // its recipe keeps all step (fp8_cost.hpp: TE's FP8 weight cache, amax histories)
  double grads = 0;        // gradients held, 16-bit or fp32 by framework
  double optimizer = 0;    // fp32 Adam moments (+ master weights) held
  double activations = 0;  // in-flight micro-batches x activation per chunk, + stage extras, + with
                           // recomputation the one layer rebuilt at a time during a backward (Megatron)
  double buffers = 0;      // gathered ZeRO-3 parameters and unsharded gradient buffers
  double peak = 0;         // sum of the above (closed-form bound: everything live at once)
};

// Memory of one GPU of PP rank `pp_rank`. Model states by strategy, at the plan's framework precision
// (model_state_bytes_per_param(framework_precision(parallel))): three_d and pp_zero1 zero_model_states over the
// z*dp replicas with parallel.zero_stage; zero3 ZeRO-3 over z*dp; zeropp_a hybrid A; zeropp_b hybrid B; zero3_pp
// hybrid A when zero_stage == 0 else B. Psi is the rank's parameters per TP rank (rank_params): for a 3D plan
// with megatron this is theoretical_memory_usage.py's weight and optimizer memory, up to how the two count
// parameters (tests/analytic/megatron_memory_test.cpp lists the differences).
// Buffers, gathered parameters at g = element_bytes(dtype) and unsharded gradients at r = the reduce dtype's
// size: ZeroPP / zero3_pp one chunk's gathered parameters (g*Psi_s/v) plus the unsharded gradients awaiting
// reduce-scatter (per_unit: every chunk's, r*Psi_s, since a unit's backwards visit all chunks before its
// reduce; per_w and zero3_pp: one chunk's, r*Psi_s/v); zero3: two layers' gathered parameters (current +
// prefetch) and one layer's gradients (the largest of a layer and the embedding); none for three_d and
// pp_zero1 (their full gradient buffer is the model state's `grads`); zero3 under PP (FSDP2, parameters kept
// gathered across micro-batches) every chunk's gathered parameters and unsharded gradients, (g + r)*Psi_s. zero3's
// model states are ZeRO-3 over its shard group (z*cp*dp_shard with HSDP).
// Activations: in-flight count x layers per chunk x per-layer bytes, every set counted at M_B (a set whose W
// is deferred holds only M_W < M_B, so this bounds zb_h1/zb_h2/zeropp), + the first / last stage's extras
// times the rank's in-flight count spread evenly over its v chunks (rounded up).
MemoryBytes memory_bytes(const Plan& plan, int pp_rank);
// The PP rank with the highest peak.
MemoryBytes memory_bytes(const Plan& plan);
// The same with the plan's basics already worked out (plan_basics(plan): estimate's).
MemoryBytes memory_bytes(const Plan& plan, const PlanBasics& basics);
// Every PP rank's, in rank order (the rank-independent terms worked out once).
std::vector<MemoryBytes> memory_bytes_by_rank(const Plan& plan);

}  // namespace zeropp::analytic
