#pragma once
// FP8 training on the CPU backend by emulation: the numerics of a TransformerEngine Float8CurrentScaling run
// (Megatron --fp8-format hybrid --fp8-recipe tensorwise) and of a torchao Float8Linear dynamic tensorwise run, which
// are the same (cost_model/spec/fp8.hpp lists which GEMMs run FP8: the four weight GEMMs of each layer, forward,
// dgrad and wgrad; the attention core, norms, embedding and LM head stay in the compute dtype).
//
// Each FP8 operand is quantized and dequantized in fp32 before the backend's fp32 GEMM:
//   scale = fp8_max / amax(tensor)   (1 when amax is 0), computed in fp32;
//   q     = to_fp8(x * scale)        round to nearest even, saturating at +-fp8_max (NaN stays NaN);
//   x'    = q * (1 / scale)          TE multiplies by scale_inv.
// Formats (TE recipe.py Format.HYBRID: "FP8 tensors in the forward pass are in e4m3 format, FP8 tensors in the
// backward pass are in e5m2 format"; torchao float8_linear.py casts input and weight with e4m3_dtype and
// grad_output with e5m2_dtype in the tensorwise recipe): E4M3 (max 448) for the input X and the weight W, E5M2
// (max 57344) for the output gradient dY. The cast is the hardware's: PTX cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32
// rounds to nearest even and clamps to the largest finite value (PTX ISA, cvt); torchao's to_fp8_saturated clamps
// to the format's max before the cast as well.
// What this computes is exact for an FP8 GEMM with fp32 accumulation (Hopper's FP8 tensor cores accumulate in
// fp32) up to two roundings: the summation order, and the fp32 rounding of q * scale_inv (the hardware multiplies
// the scale_inv product into the fp32 sum once instead).
//
// Amax scope: every FP8 tensor's amax is the whole logical tensor's. Under tensor parallelism the block reduces the
// amax (max) over the TP group for each quantized operand; the gathered weights of ZeRO-3 / ZeroPP are whole
// already (quantized after the gather: torchao's FSDP2 float8 all-gather casts the shard with the full weight's
// amax, precompute_float8_dynamic_scale_for_fsdp, which is the same value). So every parallel run quantizes what the
// single-rank run quantizes. Note: TransformerEngine reduces the amax over TP only for the sequence-parallel
// operands it casts before the all-gather (module/linear.py, set_quantizer_amax_reduction_group: the input of a
// column-parallel linear, the output gradient of a row-parallel one); it keeps per-shard scales for the weight
// shards and the column-sharded activations, so a TE run under TP is not bitwise a single-GPU run. The trainer
// reduces every operand so that it is (and the key table says so).
#include <cstdint>

namespace zeropp::e2e {

enum class Fp8Format { e4m3, e5m2 };

// How the blocks run their linear layers (GptConfig::fp8).
struct Fp8Training {
  bool enabled = false;
  // Reduce each operand's amax over the TP group (always, except in the test that shows it matters).
  bool reduce_amax = true;
};

float fp8_max(Fp8Format f);  // 448 (E4M3, OCP FP8 "E4M3FN": no infinities), 57344 (E5M2)
// x rounded to the nearest value of format f, ties to even, saturating at +-fp8_max; NaN stays NaN.
float fp8_round(float x, Fp8Format f);
// Largest |x| over n values (NaN ignored).
float fp8_amax(const float* x, std::int64_t n);
// The current scale for `amax`: fp8_max / amax in fp32, 1 when amax is 0 or not finite.
float fp8_scale(float amax, Fp8Format f);
// dst[i] = fp8_round(src[i] * scale) * (1 / scale); dst may be src.
void fp8_quantize_dequantize(float* dst, const float* src, std::int64_t n, float scale, Fp8Format f);

}  // namespace zeropp::e2e
