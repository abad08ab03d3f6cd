#pragma once
// What the training framework a plan follows keeps per parameter and what it communicates, as dtypes. The
// analytic memory and traffic formulas and the simulator's inputs all ask here, so that the bytes a plan holds
// and the bytes it moves follow the same framework. Which GPUs share (shard) each state is the strategy's
// business (data_parallel_sync, strategy.hpp); this file says only how wide each element is.
//
//   framework  parameters held   gradients held        optimizer (fp32)              gradients reduced in
//   megatron   dtype             main_grad: fp32       master + Adam m, v: 12 bytes  main_grad's dtype (fp32)
//                                (bf16 training)
//   deepspeed  dtype             dtype                 master + m, v: 12             dtype
//   fsdp2      fp32 shards       fp32 shards           m, v: 8 (the fp32 shards      fp32 (reduce_dtype)
//                                                      are the master)
//   zeropp     dtype             dtype                 master + m, v: 12             dtype
// Bytes per parameter with bf16: megatron 2 + 4 + 12 = 18, the others 16. fp32 training keeps no master copy
// (4 + 4 + 8 = 16 everywhere). Parameters travel (all-gathers) and are gathered for compute in `dtype`.
//
// Where the figures come from:
//   megatron   Megatron-LM (training/arguments.py, core/distributed/param_and_grad_buffer.py): with --bf16 the
//              gradients accumulate in fp32 `main_grad` buffers and are reduced from them in fp32 unless
//              --grad-reduce-in-bf16; with --fp16 they stay fp16 (no --accumulate-allreduce-grads-in-fp32).
//              training/theoretical_memory_usage.py: 18 bytes per parameter, 6 + 12/d with the distributed
//              optimizer (ZeRO-1 over the d data-parallel GPUs).
//   deepspeed  the ZeRO paper (Rajbhandari et al. 2020): 16-bit parameters and gradients, reduced in 16 bits,
//              fp32 master, momentum and variance: 2 + 2 + 12. (DeepSpeed's BF16_Optimizer, which some bf16
//              configurations run, accumulates in fp32 by default, data_types.grad_accum_dtype: give
//              reduce_dtype fp32 for those.)
//   fsdp2      PyTorch FSDP2 as torchtitan configures it (training.dtype float32, mixed_precision_param bfloat16,
//              mixed_precision_reduce float32): fully_shard(MixedPrecisionPolicy(param_dtype=bf16,
//              reduce_dtype=fp32)) over an fp32 model. The fp32 parameter shards are what the optimizer steps
//              (no extra master copy, as MixedPrecisionPolicy's documentation says); they are cast to bf16 for
//              the all-gather; gradients come out of backward in bf16, are cast to fp32 and reduce-scattered in
//              fp32 into fp32 gradient shards; Adam's m and v are fp32: 4 + 4 + 8 = 16 bytes over N.
//   zeropp     the ZeroPP authors' code was not found; DESIGN.md section 4's convention, the ZeRO paper's 16
//              bytes with 16-bit gradients. It is what InternEvo (the Shanghai AI Lab training code) does in
//              its HybridZeroOptimizer: bf16 parameters and gradients, gradients reduced in their own dtype,
//              an fp32 master and fp32 Adam states for the GPU's ZeRO-1 partition.
//
// `reduce_dtype` in a plan overrides the dtype gradients are reduced in. Megatron, DeepSpeed and ZeroPP reduce
// from the buffer they accumulate in, so it is also the dtype of the gradients they hold (Megatron's
// --grad-reduce-in-bf16 is reduce_dtype bf16: 2 + 2 + 12); FSDP2's gradient shards stay fp32 (the sharded
// parameters' dtype) whatever it reduces in.
#include <string>

#include "cost_model/spec/parallel_spec.hpp"

namespace zeropp {

struct FrameworkPrecision {
  Dtype params = Dtype::bf16;  // the parameters held between steps (sharded under ZeRO-3)
  Dtype grads = Dtype::bf16;   // the gradients held: the accumulation buffer, or its shard
  bool master_copy = true;     // the optimizer keeps its own fp32 copy of the parameters (params are 16-bit)
  Dtype reduce = Dtype::bf16;  // gradients on the wire, and the unsharded gradients awaiting their reduction
  Dtype gather = Dtype::bf16;  // parameters on the wire (all-gathers) and gathered for compute
};

// PyTorch FSDP, either version (fsdp1: FlatParameter FullyShardedDataParallel as Composer / llm-foundry run it with
// DEFAULT mixed precision, bf16 compute over fp32 shards, fp32 reduction; fsdp2: fully_shard as torchtitan runs it).
// Both keep the same states and run the same PyTorch eager kernels; every rule below that names fsdp2 holds for
// fsdp1 too, except the TP overlap (torchtitan's async TP is FSDP2's) and the copies around the ZeRO-3 collectives
// (analytic/zero3_execution.hpp).
bool is_fsdp(Framework framework);

// The dtype `framework` reduces gradients in when training in `dtype` and the plan does not say.
Dtype default_reduce_dtype(Framework framework, Dtype dtype);

// A framework's precision for training dtype `dtype`, gradients reduced in `reduce` (absent: the default).
FrameworkPrecision framework_precision(Framework framework, Dtype dtype, std::optional<Dtype> reduce = {});
// A plan's: framework_of(p), p.dtype, p.reduce_dtype.
FrameworkPrecision framework_precision(const ParallelSpec& p);

// How many buckets the data-parallel gradient sync of virtual stage `stage` (holding `stage_params` parameters)
// is cut into, each launched as soon as the backward has produced its gradients, so that all but the last
// overlap the stage's last backward pass. 1 = one collective after the stage's gradients are complete.
//   megatron   DistributedDataParallel with --overlap-grad-reduce: buckets of max(40M, 1M x dp) parameters
//              (ddp_config.bucket_size's default), but bucketing is turned off on every pipeline rank but the
//              first and on every model chunk but the first (core/distributed/distributed_data_parallel.py;
//              training.py get_model passes disable_bucketing for model_chunk_idx > 0): there the sync is off
//              the critical path. So only virtual stage 0 is bucketed.
//   deepspeed  ZeRO-1/2 with overlap_comm: reduce_bucket_size, 5e8 elements by default.
//   fsdp2      one reduce-scatter per fully_shard module, a transformer layer (torchtitan): `layers` buckets.
//   zeropp     the gradients are reduce-scattered inside the ZeRO-3 group first (REDUCE_GRAD), and the DP sync
//              follows that collective, not the backward: 1.
// Without overlap_grad_reduce every framework syncs once, after the backward.
int dp_sync_buckets(const ParallelSpec& p, int stage, double stage_params, int layers);

// The fraction of a GPU operation table's rates (gpu_ops.hpp: matmul, attention, HBM) a framework's kernels sustain
// over a training step: launch gaps, synchronisation, the small kernels the time model does not list, and the
// clocks a GPU holds over a long run rather than a benchmark's seconds. FITTED, not measured: the one value per
// framework family that minimises the mean |error| over its validation sets together (configs/validation/, `zeropp
// validate --fit-framework`), each set's leave-one-set-out error reported beside it (search/validation.hpp):
//   megatron, deepspeed, zeropp  fitted on Narayanan et al. 2021 Table 1 (A100) and Megatron-Core r0.8 (H100): the
//              kernel stack of Megatron-LM (fused kernels, TransformerEngine); DeepSpeed (Megatron-DeepSpeed) and
//              the ZeroPP authors' InternEvo run the same kind of fused kernels, an assumption stated here.
//   fsdp2      fitted on the PyTorch FSDP sets (llm-foundry's MPT benchmarks, A100 and H100).
// A plan's parallel.kernel_efficiency overrides it.
double framework_kernel_efficiency(Framework framework);
// A plan's: its own kernel_efficiency, else its framework's.
double kernel_efficiency(const ParallelSpec& p);

// What a framework's selective recomputation reruns before a layer's backward (its time and FLOPs; what it keeps
// in memory is memory.hpp's):
//   megatron, deepspeed, zeropp  the core attention (Korthikanti et al. 2022): Megatron-Core wraps it in a checkpoint
//              (megatron/core/transformer/attention.py, _checkpointed_attention_forward), which reruns the
//              attention kernel's forward before its backward, FlashAttention's included.
//   fsdp2      torchtitan's selective op checkpointing (torchtitan/models/llama3/infra/parallelize.py, _save_list and
//              its policy): every op's output is recomputed except those of the listed ops (matmuls, SDPA,
//              reductions), and of the matmuls only every other one is saved: half the weight matmuls and every
//              memory-bound kernel of the forward rerun, the attention kernel does not.
struct SelectiveRecompute {
  bool attention_core = true;  // the attention core's forward (flash kernel, or unfused GEMMs and softmax)
  double weight_matmuls = 0;   // share of the forward weight matmuls rerun
  bool memory_bound = false;   // the forward's memory-bound kernels (norms, activation, residual adds)
};
SelectiveRecompute selective_recompute(Framework framework);

// Bytes the framework's cross-entropy kernels move per logit (of the GPU's vocabulary shard), in `dtype`
// (e bytes): the LM head's memory-bound tail.
//   megatron, deepspeed, zeropp  Megatron's vocab-parallel cross entropy, unfused as Megatron-Core r0.8 runs it by
//              default (megatron/core/tensor_parallel/cross_entropy.py, cross_entropy_loss_fusion off): forward
//              .float() (read e, write 4), max (read 4), subtract in place (8), exp in place (8), sum (read 4),
//              divide in place (8) = e + 36; backward multiply in place (8) and the cast back for the output
//              layer's GEMM (read 4, write e) = 12 + e. (zeropp, deepspeed: the same kernels as the 3D baseline,
//              an assumption; Megatron-DeepSpeed runs Megatron's.)
//   fsdp2      PyTorch eager F.cross_entropy under autocast: forward cast to fp32 (read e, write 4), log_softmax
//              (read 4 twice, write 4) = e + 16; backward the dense nll gradient (write 4), log_softmax backward
//              (read 8, write 4) and the cast back (read 4, write e) = 20 + e.
struct CrossEntropyBytes {
  double forward = 0, backward = 0;
};
CrossEntropyBytes cross_entropy_bytes_per_logit(Framework framework, double e);

// Whether a plan's weight-gradient GEMMs accumulate into the gradient buffer in their epilogue
// (ParallelSpec::grad_accumulation_fusion; analytic/grad_accumulation.hpp prices either way):
//   megatron   on unless the plan says false: Megatron-LM's --gradient-accumulation-fusion, default since it was added
//              (commit 83b1e42, 2022-02-13, "gradient accumulation fusion"; fp16 main_grad since 07916bf,
//              2022-09-27): megatron/core/tensor_parallel/layers.py (wgrad_gemm_accum_fp32 / _fp16 into
//              weight.main_grad) and TransformerEngine's Linear with fuse_wgrad_accumulation. Megatron-LM of 2021
//              (Narayanan et al.'s runs) predates it: its DDP hook added param.grad into main_grad.
//   others     off: their linear layers return a fresh 16-bit weight gradient to autograd.
bool grad_accumulation_fusion(const ParallelSpec& p);

// The TP communication overlap a framework runs when asked to (ParallelSpec::tp_comm_overlap):
//   megatron   userbuffers: --tp-comm-overlap through TransformerEngine (megatron/core/model_parallel_config.py,
//              tp_comm_overlap; megatron/training/arguments.py requires --sequence-parallel)
//   fsdp2      async_tp: torchtitan's --parallelism.enable_async_tensor_parallel (torch.compile's micro-pipeline
//              TP pass over symmetric memory; torchtitan/distributed/tensor_parallel.py maybe_enable_async_tp)
//   deepspeed, zeropp   none: they have no TP communication overlap.
TpCommOverlap framework_tp_overlap(Framework framework);
// Why a GPU of `cluster` cannot run `kind` ("" when it can): userbuffers needs CUDA multicast, compute capability
// 9.0+ (TransformerEngine's examples/pytorch/comm_gemm_overlap/README.md; older devices need UB_SKIPMC=1 and fall
// back to "a less performant implementation" over CUDA IPC, whose cost is not known here), and the SM count its
// kernels are priced by; both need GPUs (a CPU profile has no tensor cores to overlap with).
std::string tp_overlap_unavailable(TpCommOverlap kind, const ClusterSpec& cluster);


// Where a plan's framework reduces the gradients of the linear layers' biases and of the norms' weights (and
// LayerNorm biases) over the tokens: sums the weight-gradient GEMMs do not do unless their epilogue does. Either
// inside a kernel that runs anyway (no traffic of its own), or in a pass of its own that reads the tensors again
// (analytic/time_model.cpp prices those reads in W, weight_reduction_bytes):
//   bias           in the wgrad GEMM: TransformerEngine's Linear asks cuBLASLt for the bias gradient in the weight-
//                  gradient GEMM's epilogue (transformer_engine/pytorch/module/linear.py, backward: the bias passed to
//                  the wgrad gemm unless FP8; common/gemm/cublaslt_gemm.cu, CUBLASLT_EPILOGUE_BGRADB); InternEvo's
//                  FusedDenseFunc does the same through flash-attn's fused_dense_lib.linear_bias_wgrad
//                  (internlm/model/utils.py, whenever flash attention is on).
//                  a pass of its own, one read of the output gradient (e per element of the linear's output on the
//                  GPU): Megatron's local layers (megatron/mpu/layers.py of 2021: F.linear's autograd for the QKV
//                  projection, and the skip_bias_add biases of the other three summed by autograd out of the fused
//                  bias-GELU and bias-dropout-add), PyTorch eager nn.Linear (addmm's backward, grad.sum(0)).
//   norm weights   in the norm's backward kernel: TransformerEngine's layernorm / rmsnorm backward accumulates the
//                  dgamma (dbeta) partials in the pass that computes dx and adds them in a small finalize kernel
//                  (common/normalization/layernorm/ln_bwd_kernels.cuh, dgamma_part, ln_bwd_finalize_tuned_kernel).
//                  a pass of its own reading dy and x again (2e per element): Apex's fused layer norm, which
//                  Megatron's local layers and Megatron-DeepSpeed compile as megatron/fused_kernels/
//                  layer_norm_cuda_kernel.cu (HostLayerNormGradient: cuComputePartGradGammaBeta over dout and input
//                  before cuComputeGradInput), and PyTorch's native layer norm backward (aten/src/ATen/native/cuda/
//                  layer_norm_kernel.cu, the same partial gamma/beta kernels); an RMSNorm written as PyTorch ops
//                  (InternEvo's manual_rms_norm, internlm/model/ops/norm.py) reduces dy * x-hat over the tokens in
//                  autograd: at least the same two reads.
//   framework      bias              norm weights
//   megatron       in the wgrad GEMM  in the backward kernel  (transformer_impl transformer_engine, the default)
//   megatron       own pass           own pass                (transformer_impl local: Megatron-LM of 2021)
//   deepspeed      own pass           own pass                (Megatron-DeepSpeed's local layers and fused kernels)
//   fsdp1, fsdp2   own pass           own pass                (PyTorch eager)
//   zeropp         in the wgrad GEMM  own pass                (InternEvo)
struct WeightReductions {
  bool bias_in_wgrad_gemm = true;
  bool norm_in_backward_kernel = true;
};
WeightReductions weight_reductions(const ParallelSpec& p);

}  // namespace zeropp
