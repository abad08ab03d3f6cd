#pragma once
// Tensor-parallel communication of one transformer layer as the plan's framework runs it
// (ParallelSpec::tp_comm_overlap, spec/parallel_spec.hpp), priced on one GPU for one micro-batch: the seconds it adds
// to the layer's forward and backward, i.e. the transfers left on the critical path plus the compute slowed by the
// communication kernels that run beside it (contention.hpp, the one rule every overlap pays).
//
// Per layer, Megatron's layout: QKV and up (column-parallel) are fed by an all-gather of the sequence-parallel
// activation, projection and down (row-parallel) produce partial sums that are reduce-scattered; without sequence
// parallelism each pair is one all-reduce instead (forward after projection and down; backward after the QKV and
// up input gradients). In the backward the row-parallel input-gradient GEMMs need the output gradient gathered,
// the column-parallel ones produce partial input gradients to reduce-scatter, and their weight gradients need the
// layer input again: Megatron keeps it sequence-split and gathers it a second time (Korthikanti et al. 2022,
// section 4.2.2), torchtitan keeps the gathered input (autograd saves the all-gather's output).
//
//   no SP (every framework)   forward 2 all-reduces, backward 2 all-reduces, on the critical path (the 2021
//                             Megatron-LM of Narayanan et al.).
//   none, megatron            forward 2 AG + 2 RS exposed. Backward: the 2 output-gradient AGs exposed; the input
//                             re-gather under the dgrad GEMM and the dgrad's RS under the wgrad GEMM, issued
//                             asynchronously by LinearWithGradAccumulationAndAsyncCommunication (megatron/core/
//                             tensor_parallel/layers.py), each exposed beyond its GEMM and paying NCCL contention.
//   none, other frameworks    forward 2 AG + 2 RS, backward 2 AG + 2 RS, exposed (DTensor redistributions wait
//                             at their first use, which is the next GEMM).
//   userbuffers (TE defaults, transformer_engine/pytorch/module/base.py initialize_ub; comm_gemm_overlap.cpp)
//     ring exchange  qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad: the GEMM in tp chunks of rows, chunk i on the
//                    data at hand while chunk i+1 arrives over NVLink by copy engine (split_overlap_ag); the first
//                    chunk is local, so what is exposed is each step's transfer beyond its chunk's GEMM; 1 SM.
//     pipeline       proj_fprop, fc2_fprop: the GEMM in num_splits = 4 chunks on sm_count - 16 SMs, each chunk's
//                    RS on the 16 others after it (split_overlap_rs); the last chunk's RS stays exposed.
//     bulk           qkv_dgrad/qkv_wgrad, fc1_dgrad/fc1_wgrad: the whole AG under the dgrad GEMM, the whole RS
//                    under the wgrad GEMM, each GEMM on sm_count - 16 SMs.
//   async_tp (torch/distributed/_symmetric_memory: fused_all_gather_matmul, fused_matmul_reduce_scatter)
//     AG -> matmul   as the ring exchange, remote shards pulled by copy engine (no SMs).
//     matmul -> RS   the matmul in tp chunks, each chunk's partial sum pushed to its owner by copy engine while the
//                    next is computed; the last push and the final reduction of tp partials (memory-bound) exposed.
//     Forward: AG -> QKV, AG -> up, proj -> RS, down -> RS; backward: AG -> proj/down dgrad, qkv/up dgrad -> RS.
// A chunked GEMM runs each chunk at its own shape's efficiency, so chunking costs what smaller GEMMs cost.
// The LM head's and the embedding's TP collectives stay outside (time_model.cpp): no framework overlaps them.
#include <functional>

#include "cost_model/analytic/flops.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::analytic {

struct TpLayerSeconds {
  double forward = 0;   // seconds added to one layer's forward (and to its recomputation)
  double backward = 0;  // seconds added to its backward (input and weight gradients together)
};

// `gemm_seconds(g)` prices a GEMM (all g.count of them) on the plan's GPU with every SM. `model` is the model as
// one rank holds its tokens (with context parallelism: cp_rank_model, s/cp tokens per message); the plan's own
// model in the second form. `wgrad_store`: the bytes per element the weight-gradient GEMMs' epilogue moves
// (Gemm::store_bytes; grad_accumulation.hpp), 0 for a fresh store.
TpLayerSeconds tp_layer_seconds(const Plan& plan, const ModelSpec& model, const LayerGemms& gemms,
                                const std::function<double(const Gemm&)>& gemm_seconds, double wgrad_store = 0);
inline TpLayerSeconds tp_layer_seconds(const Plan& plan, const LayerGemms& gemms,
                                       const std::function<double(const Gemm&)>& gemm_seconds,
                                       double wgrad_store = 0) {
  return tp_layer_seconds(plan, plan.model, gemms, gemm_seconds, wgrad_store);
}

}  // namespace zeropp::analytic
