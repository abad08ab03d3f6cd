#pragma once
// Weight-gradient accumulation over the micro-batches of an iteration, as each framework executes it: what the
// weight-gradient (wgrad) GEMM's epilogue moves and what separate memory-bound kernels add, per element of a layer's
// linear weights (and of the LM head's) on one GPU. The closed form (time_model.cpp, action_costs: the W action and
// the TP overlap beside it) and the simulator's cost table (costs_from_plan.cpp, from action_costs) price it here.
//
// The gradient of a weight accumulates over a window of micro-batches, then is reduced (summed over GPUs) and
// consumed. R reductions per iteration of B micro-batches (strategy.hpp, data_parallel_sync):
//   replicated (3d, 1f1b_zero1; any strategy without a ZeRO-3 group)  R = 1: the DP sync after the last backward
//   ZeRO-3 per micro-batch (zero3 without PP, zero3_pp)                R = B: reduce-scattered after every backward
//   ZeroPP (zeropp_a/b)                                                R = ceil(B/U) units (grad_reduce per_w: B)
//   FSDP2 under PP (PyTorch's pipeline stage turns the sync off)       R = 1
// In each window the first micro-batch's gradient is assigned (R of them per iteration), each later one is added
// (B - R). With a ZeRO-3 group the reduction writes a shard of 1/N of the elements, and each reduction after the
// first adds into the shard's gradient (R - 1 per iteration).
//
// Per element, e = bytes of the training dtype, g = of the gradients the framework holds (framework.hpp,
// FrameworkPrecision::grads), r = of the reduce dtype; "store" is what the wgrad GEMM's epilogue moves (e: a fresh
// output), "kernel" the bytes (read + written) of the separate kernels:
//   megatron, --gradient-accumulation-fusion (on by default; framework.hpp grad_accumulation_fusion)
//     layers  TransformerEngine's Linear with fuse_wgrad_accumulation (transformer_engine/pytorch/module/linear.py,
//             the wgrad GEMM with out=main_grad, accumulate = not is_first_microbatch; Megatron-Core passes
//             is_first_microbatch for the first micro-batch of each iteration: megatron/core/extensions/
//             transformer_engine.py, TELinear.forward, schedules.py set_is_first_microbatch): the first micro-batch
//             of a window stores g (beta = 0), the others read and write it, 2g (beta = 1). Kernel 0.
//     head    the output layer is Megatron's own ColumnParallelLinear (megatron/core/tensor_parallel/layers.py,
//             LinearWithGradAccumulationAndAsyncCommunication.backward: fused_weight_gradient_mlp_cuda.
//             wgrad_gemm_accum_fp32 / _fp16 into weight.main_grad): 2g every micro-batch.
//     reset   zero_grad_buffer() before every iteration (megatron/core/distributed/param_and_grad_buffer.py,
//             _ParamAndGradBuffer.reset: grad_data.zero_()): g per gradient element held, once per iteration.
//   megatron, --no-gradient-accumulation-fusion (and Megatron-LM of 2021, before the fusion existed): a fresh
//             16-bit weight gradient, then the DDP hook adds it into the zeroed main_grad
//             (core/distributed/distributed_data_parallel.py, _make_backward_post_hook: param.main_grad.add_(
//             param.grad.data); megatron/model/distributed.py _make_param_hook in 2021): store e, kernel e + 2g every
//             micro-batch; the same reset.
//   deepspeed, zeropp  a fresh 16-bit weight gradient (Megatron-DeepSpeed's LinearWithGradAccumulationAndAsync-
//             Communication computes grad_output.t().matmul(total_input), its fused path commented out; InternEvo's
//             internlm/model/utils.py linear_bias_wgrad_torch, torch.matmul(grad_output.t(), my_input); InternEvo has
//             no fused accumulation) accumulated in param.grad by PyTorch's AccumulateGrad (torch/csrc/autograd/
//             functions/accumulate_grad.h: the first gradient is stolen, later ones added in place,
//             variable_grad += new_grad): store e; kernel 0 on the first micro-batch of a window, 3e after it.
//             DeepSpeed ZeRO-1 reduces at the gradient-accumulation boundary only (deepspeed/runtime/zero/
//             stage_1_and_2.py: reduce_ready_partitions_and_remove_grads runs at is_gradient_accumulation_boundary
//             unless ZeRO-2 or overlap_comm, whose default is off for stages 1 and 2: zero/config.py
//             overlap_comm_valid); InternEvo skips the reduction on every micro-batch but the last
//             (internlm/core/scheduler: optimizer.skip_grad_reduce; solver/optimizer/hybrid_zero_optim.py).
//             Gradients held wider than e (reduce_dtype fp32; DeepSpeed's grad_accum_dtype fp32:
//             stage_1_and_2.py _fill_param_grad_accum_attribute, grad_accum = grad.to(fp32) on the first
//             micro-batch, grad_accum.add_(grad.to(fp32)) after it): kernel e + g, then e + 4g (the cast's temporary
//             written and read again).
//             The shard of a ZeroPP plan (the authors' code was not found; ASSUMED as InternEvo's weight-parallel
//             path adds each reduce-scattered shard into the parameter's gradient, hybrid_zero_optim.py
//             _accum_grads_store_in_bucket: _param.grad.add_(_grad)): 3g per shard element for each reduction after
//             the first, on the compute stream.
//   fsdp2     reduce-scattered every micro-batch without PP: nothing accumulates unsharded; under PP (sync off) the
//             post-backward keeps an unsharded gradient in the reduce dtype (torch/distributed/fsdp/_fully_shard/
//             _fsdp_param.py: to_accumulated_grad_if_needed casts the first, grad.to(reduce_dtype): e + r;
//             accumulate_unsharded_grad_if_needed adds the later ones, unsharded_accumulated_grad += grad: e + 2r;
//             with r = e autograd's 3e as above). Store e.
//   fsdp1     reduce-scattered every micro-batch (llm-foundry runs Composer, whose composer/trainer/
//             dist_strategy.py ddp_sync_context enters no_sync only for a DistributedDataParallel model: FSDP syncs
//             each micro-batch): store e, nothing accumulates unsharded.
// The shard accumulation of FSDP1, FSDP2 and DeepSpeed ZeRO-3 runs on their reduce-scatter streams and is priced
// with those collectives (zero3_execution.hpp, reduce_side), at R - 1 additions per iteration as here.
// Megatron with a ZeRO-3 strategy (a framework override) accumulates its windows in the epilogue as above and its
// shard as ZeroPP's. Biases and norm weights (O(h) per layer) are left out. The TE rule's first micro-batch
// applies to the layers of every window; the head and the reset are per iteration.
//
// Averaged over the B micro-batches, so that the W action of every micro-batch carries its share and the iteration
// the total: store = (R first + (B - R) later) / B, and likewise the kernel, plus (R - 1) / B shard additions over
// 1/N of the elements.
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::analytic {

struct GradAccumulation {
  // Bytes a wgrad GEMM's epilogue moves per output element, averaged over the micro-batches: the store_bytes of its
  // Gemm (flops.hpp; e for a fresh output). For the layers' GEMMs and for the LM head's.
  double layer_store = 0, head_store = 0;
  // Bytes (read + written) of separate accumulation kernels per weight element per micro-batch, averaged; the ZeroPP
  // shard's additions included (per element of the whole weight: already divided by N).
  double kernel = 0;
  // Bytes per gradient element held, once per iteration: the gradient buffer's reset (Megatron's zero_grad_buffer).
  double reset = 0;
};

// The plan's accumulation (above).
GradAccumulation grad_accumulation(const ParallelSpec& p);
// The same with the plan's data_parallel_sync and framework_precision already worked out (PlanBasics: every plan
// evaluation prices it).
GradAccumulation grad_accumulation(const ParallelSpec& p, const DataParallelSync& sync,
                                   const FrameworkPrecision& precision);

// Reductions per iteration of a plan's weight gradients (R above) and whether each writes a ZeRO-3 shard.
struct GradReductions {
  int count = 1;
  bool into_shard = false;
};
GradReductions grad_reductions(const ParallelSpec& p);
GradReductions grad_reductions(const ParallelSpec& p, const DataParallelSync& sync);
// Whether those depend on the scheduling unit U (ZeroPP reducing once per unit): then so do the W action's seconds,
// and plans that differ only in U do not share their costs (search.cpp, CostsCache).
bool grad_reductions_depend_on_unit(const ParallelSpec& p);

}  // namespace zeropp::analytic
