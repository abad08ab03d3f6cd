#pragma once
// Which kernel runs a plan's attention core (AttentionKernel, gpu_ops.hpp), as each framework picks it on each GPU,
// and which kernels a GPU can run. The time model prices the core at the chosen kernel's rates from the GPU's
// operation table (analytic/op_time.hpp, attention_rate).
//
// The default (a plan's parallel.attention_kernel absent), for a model with attention "flash" (an "unfused" model
// runs unfused: Megatron-LM 2021-2022's two batched GEMMs and fused softmax):
//   megatron, deepspeed, zeropp  TransformerEngine's DotProductAttention: with both FlashAttention (flash-attn 2.x)
//              and cuDNN's FusedAttention (F16_arbitrary_seqlen) available it drops FlashAttention on compute
//              capability 9.0 "for performance" and keeps it on others (TransformerEngine v1.7
//              transformer_engine/pytorch/attention.py, DotProductAttention.forward: "Select FusedAttention on sm90
//              and FlashAttention on others for performance"; v1.9 get_attention_backend: `device_compute_capability
//              == (9, 0)`; from v2.x `>= (9, 0)`, Blackwell included): cudnn from 9.0 up, flash2 below. Megatron-Core
//              r0.8 ran TE 1.7-1.9. (DeepSpeed and ZeroPP: Megatron's kernel stack, the assumption framework.hpp
//              states for their kernel_efficiency.)
//   fsdp2      torchtitan's attention is PyTorch's scaled_dot_product_attention, whose default backend order is
//              flash, efficient, math, cuDNN (aten/src/ATen/Context.h, sdp_priority_order; sdp_utils.cpp
//              priority_order): the flash backend, FlashAttention-2 built into PyTorch, on every GPU from 8.0.
//              (PyTorch 2.5.0 alone put cuDNN first; later releases put it back last unless asked.)
//   fsdp1      llm-foundry's MPT runs attn_impl "flash" with the flash-attn 2 package: its benchmark script
//              (scripts/train/benchmarking/submit_benchmarks.py) defaults `--attn_impl flash` and installs
//              `.[gpu-flash2]` (flash-attn==2.4.2 pinned for its H100 FP8 runs): flash2.
// Absent compute capability (a profile without an operation table): treated as below 9.0, as gpu_ops.hpp says.
#include <string>

#include "cost_model/spec/config.hpp"

namespace zeropp {

// The kernel `framework` runs for `model` on the GPUs of `cluster` when the plan does not say.
AttentionKernel default_attention_kernel(Framework framework, const ModelSpec& model, const ClusterSpec& cluster);

// A plan's: parallel.attention_kernel, else its framework's default.
AttentionKernel attention_kernel_of(const Plan& plan);

// Why `kernel` cannot run `model`'s attention on `cluster` ("" when it can), one clause:
//   - unfused for a model with attention "flash", or a fused kernel for one with "unfused" (the model's
//     attention decides what is stored for the backward: model.attention says which);
//   - flash3 below or above compute capability 9.0: FlashAttention-3 is Hopper-only (flash-attention README,
//     "FlashAttention-3 ... Requirements: H100 / H800 GPU"; its kernels use sm90a's wgmma and TMA);
//   - flash2 and cudnn below 8.0: FlashAttention-2 supports Ampere, Ada and Hopper (flash-attention README);
//     cuDNN's fused flash attention needs Ampere or newer (cuDNN developer guide, "Fused Flash Attention");
//   - a fused kernel the profile's operation table has no figures for, when it has figures for some: its rates
//     would be guessed (the A100 profile has FlashAttention-2's alone: no cuDNN or FlashAttention-3 figure).
std::string attention_kernel_unavailable(AttentionKernel kernel, const ModelSpec& model, const ClusterSpec& cluster);

}  // namespace zeropp
