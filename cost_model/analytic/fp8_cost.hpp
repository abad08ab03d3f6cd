#pragma once
// What FP8 training (spec/fp8.hpp) changes in a plan's time, traffic and memory. The recipes and their sources are
// in spec/fp8.hpp; the formulas are here, each used by the closed form and the simulator alike.
//
// GEMM: a weight GEMM X W (X: m x k, W: k x n, count of them) in FP8, forward, dgrad and wgrad alike:
//   compute  2mnk count / (fp8 peak x gpu.fp8_matmul_efficiency x utilization) (utilization: op_time.hpp's tile and
//            wave quantization, the same tiles), memory (mk + kn) x 1 byte + mn x e (bf16 output) over HBM; the
//            larger of the two, with the profile's exposed share of the output store added after it as for bf16
//            (op_time.hpp's gemm_roofline, gpu.gemm_epilogue_exposed: measured on bf16 GEMMs only, assumed for
//            FP8 ones, whose kernels write their tile in the same epilogue). Attention core, norms, embedding and
//            LM head keep their bf16 prices.
// Casts (memory-bound kernels, priced by op_time.hpp's memory_time), per element of each tensor, e = 2 (bf16):
//   a = e when the recipe reads the tensor once for its amax before casting (te_current, torchao_*), else 0.
//   TransformerEngine (te_*): one cast + transpose of X in the forward, of dY in the backward (read e, write the FP8
//     tensor and its FP8 transpose: 1 + 1), each a + e + 2; the weight likewise, a + e + 2 per weight element, once
//     per step under Megatron (cached over the micro-batches: is_first_microbatch; spread evenly over them), every
//     micro-batch under the other frameworks (no is_first_microbatch: llm-foundry under FSDP; DeepSpeed and
//     ZeroPP as assumed in fp8.hpp).
//   torchao (torchao_*): six casts per linear and micro-batch, each a + e + 1 (read, write FP8): forward X and W;
//     backward dY twice (dgrad and wgrad operands), X and W again (it saves them in high precision). With
//     fp8_all_gather the two W casts (forward and backward gathers) run on the GPU's shard before the gather: /shard.
// Wire (ZeRO-3 / FSDP all-gathers of a transformer layer's parameters): e per parameter, except with fp8_all_gather
//   the linear weights travel at 1 byte: e (1 - f) + f, f = linear-weight share of the layer's parameters.
// Memory:
//   activations  TE saves the FP8 transpose of each linear input for wgrad instead of its bf16 copy: the QKV and MLP
//                inputs (the norms' outputs) and the down-projection input at 1 byte instead of e; the projection
//                input gains a 1-byte copy where FlashAttention keeps its bf16 output (flash saves `out`), and is 1
//                byte instead of e with unfused attention. torchao saves bf16 as before.
//   held         TE's FP8 weight and its transpose, 2 bytes per linear-weight element: for the rank's layers all step
//                long without ZeRO-3 (the cache), for the gathered chunk while it is gathered under ZeRO-3 (counted
//                per gathered parameter: held_bytes_per_gathered_param). Delayed scaling's amax history,
//                kTeAmaxHistoryLen fp32 values for each of the 5 FP8 tensors of a TE linear layer (fp8_meta: input,
//                weight, output forward; grad output, grad input backward), and the scale and its inverse (fp32)
//                of each: (1024 + 2) x 4 x 5 bytes per linear; current scaling the scales only.
#include "cost_model/analytic/flops.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/fp8.hpp"

namespace zeropp::analytic {

// Seconds of the weight GEMM g (all g.count of them) in FP8 on `cluster` (needs the FP8 peak and
// gpu.fp8_matmul_efficiency: validate_fp8 refuses plans without them).
double fp8_gemm_time(const ClusterSpec& cluster, const Gemm& g);

// Elements of the four weight matrices of a layer as LayerGemms g holds them (per TP rank): sum of k x n x count.
double linear_weight_elements(const LayerGemms& g);

// Cast-kernel bytes of one layer and one micro-batch on one GPU (gemms g: the layer's at its micro-batch, per TP
// rank), forward and backward, weight casts included at their rate per micro-batch.
struct Fp8CastBytes {
  double forward = 0, backward = 0;
};
Fp8CastBytes fp8_layer_cast_bytes(const Plan& plan, const LayerGemms& g);

// Bytes per parameter of a transformer layer on the wire of a ZeRO-3 all-gather: element_bytes(gather dtype), or
// the fp8_all_gather mix. `model`, `tp` for the layer's linear share.
double gather_wire_bytes_per_param(const Plan& plan, double param_bytes);
// Bytes held per gathered parameter while gathered: the wire bytes, plus TE's FP8 weight copies (2 bytes per linear
// element) where TE casts per gather.
double held_bytes_per_gathered_param(const Plan& plan, double param_bytes);

// Bytes an FP8 plan holds all step on PP rank `pp_rank` beside the model states: TE's FP8 weight cache (without
// ZeRO-3), amax histories and scales. `layers` the transformer layers of the rank.
double fp8_state_bytes(const Plan& plan, double layers);

// The activation bytes per token of a layer's linear inputs saved for backward (memory.cpp): 1 with TE, else e.
bool fp8_saves_fp8_inputs(const ParallelSpec& p);

}  // namespace zeropp::analytic
