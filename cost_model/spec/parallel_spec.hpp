#pragma once
// ParallelSpec: how the work is split. World = tp * z * cp * pp * dp (tp and z never both > 1).
// z is the intra-node ZeRO-3 group: a data-parallel dimension whose GPUs each run their own micro-batches
// through the same stage with the stage's parameters sharded among them. There are z*dp pipelines and the
// global batch is b*B*z*dp sequences. Rank order: spec/rank_grid.hpp (tp, cp, z, dp, pp inner to outer, as
// Megatron-Core's tp-cp-dp-pp). cp ranks split every sequence (context parallelism: each holds s/cp tokens of the
// same sequences) and hold the same parameters.
// Megatron names: tensor_model_parallel_size=tp, pipeline_model_parallel_size=pp, data_parallel_size=z*dp,
// micro_batch_size=b, global_batch_size=b*B*z*dp, num_layers_per_virtual_pipeline_stage = L/(pp*v).
#include <optional>
#include <string>

#include "cost_model/spec/cluster_spec.hpp"

namespace zeropp {

// The strategies the toolkit compares (DESIGN.md section 1).
enum class Strategy {
  three_d,   // TP (+SP) + interleaved 1F1B + DP with distributed optimizer (ZeRO-1)
  zero3,     // pure ZeRO-3 data parallelism
  pp_zero1,  // 1F1B (or another PP schedule) + ZeRO-1 across data-parallel replicas
  zero3_pp,  // naive ZeRO-3 under PP: gather/free per micro-batch
  zeropp_a,  // ZeroPP hybrid A: ZeRO-3 in node + PP + DP all-reduce across nodes
  zeropp_b,  // ZeroPP hybrid B: ZeRO-3 in node + PP + ZeRO-1 across nodes
};

enum class ScheduleKind { gpipe, one_f_one_b, interleaved, bfs, zb_h1, zb_h2, zeropp };
enum class Recompute { none, selective, full };
// ZeroPP gradient reduction: once per scheduling unit (paper, 36Bh^2/U) or inside every W (authors' code).
enum class GradReduce { per_unit, per_w };
// How a CP group runs attention (spec/context_parallel.hpp): Megatron's ring (KV passed around the group under
// the attention blocks, Transformer Engine's p2p) or DeepSpeed-Ulysses (all-to-all from sequence to heads).
enum class CpKind { ring, ulysses };
// The training framework whose conventions a plan follows: which dtype it keeps parameters, gradients and
// optimizer states in and which dtype it reduces gradients in (spec/framework.hpp). fsdp1 is PyTorch's FSDP of
// FlatParameters (torch.distributed.fsdp.FullyShardedDataParallel, as Composer / llm-foundry run it), fsdp2 its
// per-parameter successor (fully_shard, as torchtitan runs it); they differ in the copies around their collectives
// (analytic/zero3_execution.hpp).
enum class Framework { megatron, deepspeed, fsdp2, zeropp, fsdp1 };
// How a plan overlaps its tensor-parallel communication with the GEMMs next to it (analytic/tp_overlap.hpp):
//   none         the framework's plain path: Megatron's sequence-parallel all-gathers and reduce-scatters on the
//                critical path, except the two it issues asynchronously in the backward of a column-parallel
//                linear (LinearWithGradAccumulationAndAsyncCommunication: the input's re-gather under the dgrad
//                GEMM, the dgrad's reduce-scatter under the wgrad GEMM)
//   userbuffers  Megatron's --tp-comm-overlap through TransformerEngine's userbuffers (comm_gemm_overlap.cpp):
//                chunked ring-exchange all-gathers under the GEMMs they feed, pipelined reduce-scatters under the
//                GEMMs that produce them, bulk overlaps in the backward; needs CUDA multicast (compute capability
//                9.0+; older GPUs fall back to a slower CUDA-IPC path, TE's examples/pytorch/comm_gemm_overlap
//                README, which is not modelled and so refused)
//   async_tp     PyTorch's async tensor parallelism (torchtitan, torch.compile with symmetric memory): the
//                matmuls decomposed per rank with copy-engine transfers (fused_all_gather_matmul,
//                fused_matmul_reduce_scatter in torch/distributed/_symmetric_memory)
enum class TpCommOverlap { none, userbuffers, async_tp };
// Megatron-LM's --transformer-impl: the layers built from TransformerEngine modules (the default since Megatron-Core
// made TE its layer stack) or from Megatron's own "local" modules, the only stack Megatron-LM of 2021 had. What the
// cost model prices differently between them: where the bias and norm-weight gradients are reduced (framework.hpp,
// weight_reductions).
enum class TransformerImpl { transformer_engine, local };
// How a plan trains its linear layers in FP8 (spec/fp8.hpp): TransformerEngine's delayed or current per-tensor
// scaling (Megatron's --fp8-format hybrid --fp8-recipe delayed|tensorwise), or torchao's float8 training with
// tensorwise or rowwise dynamic scaling (torchtitan's float8 converter).
enum class Fp8Recipe { te_delayed, te_current, torchao_tensorwise, torchao_rowwise };

struct ParallelSpec {
  Strategy strategy = Strategy::zeropp_b;
  int tp = 1;          // tensor parallel size
  int pp = 1;          // pipeline parallel size (p)
  int dp = 1;          // data parallel size across nodes (d)
  int z = 1;           // intra-node ZeRO-3 group size
  int cp = 1;          // context parallel size: ranks that split every sequence (Megatron's --context-parallel-size)
  CpKind cp_kind = CpKind::ring;
  // HSDP (strategy zero3, framework fsdp2): the ZeRO-3 shard group spans dp_shard of the dp dimension's groups
  // (z*cp*dp_shard GPUs: the z or TP-rank group and its CP ranks always shard together) and dp/dp_shard such groups
  // replicate it. torchtitan's data_parallel_shard_degree / data_parallel_replicate_degree (dp_replicate =
  // dp/dp_shard) when z = 1. 0: not given, every dp group shards (plain FSDP, dp_shard = dp).
  int dp_shard = 0;
  int zero_stage = 1;  // ZeRO stage of the dp dimension (0 = plain all-reduce DP)
  int v = 1;           // model chunks per PP rank
  ScheduleKind schedule = ScheduleKind::zeropp;
  int micro_batch = 1;             // b, sequences per micro-batch
  int micro_batches = 1;           // B, micro-batches per iteration per pipeline
  int unit = 1;                    // U, scheduling-unit size (ZeroPP)
  bool allow_ragged_units = true;  // last unit may hold B mod U micro-batches
  Recompute recompute = Recompute::none;
  bool sequence_parallel = false;
  Dtype dtype = Dtype::bf16;
  // FP8 training (`dtype` "fp8" in files and on the command line): the linear layers' GEMMs run in FP8, everything
  // else in `dtype`, which stays bf16 (spec/fp8.hpp). fp8_recipe absent: the framework's (default_fp8_recipe).
  bool fp8 = false;
  std::optional<Fp8Recipe> fp8_recipe;
  // torchao's enable_fsdp_float8_all_gather: FSDP2 all-gathers the linear weights in FP8 (tensorwise recipe only).
  bool fp8_all_gather = false;
  GradReduce grad_reduce = GradReduce::per_unit;
  // The gradient sync across data parallelism overlaps the backward (PyTorch DDP buckets, Megatron's
  // --overlap-grad-reduce); false: it starts after the rank's whole backward (Megatron's 2021 "local" DDP).
  bool overlap_grad_reduce = true;
  // How the TP communication overlaps the GEMMs (needs sequence parallelism; TpCommOverlap above). A cost-model
  // setting: the trainer runs the same TP collectives either way.
  TpCommOverlap tp_comm_overlap = TpCommOverlap::none;
  // Megatron's --overlap-param-gather (distributed optimizer): the parameter all-gather after the dp-sharded step
  // runs under the next iteration's first forward instead of before it.
  bool overlap_param_gather = false;
  // Megatron-LM's --gradient-accumulation-fusion (on by default since 2022; --no-gradient-accumulation-fusion): the
  // weight-gradient GEMMs accumulate into main_grad in their epilogue. Absent: the framework's (framework.hpp,
  // grad_accumulation_fusion); only Megatron has it.
  std::optional<bool> grad_accumulation_fusion;
  // Megatron-LM's --transformer-impl (TransformerImpl above). Absent: transformer_engine; only Megatron has it.
  std::optional<TransformerImpl> transformer_impl;
  std::optional<Framework> framework;  // absent: the strategy's (default_framework, strategy.hpp)
  std::optional<Dtype> reduce_dtype;   // absent: the framework's for `dtype` (default_reduce_dtype, framework.hpp)
  // Layers of the first and the last PP rank (Megatron's --decoder-first/last-pipeline-num-layers); 0: not given,
  // the split is even, or Megatron's with the embedding and the loss counted as layers (spec/stage_layout.hpp).
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  // The fraction of the GPU operation table's rates (spec/gpu_ops.hpp) the framework's kernels sustain in a training
  // step, in (0, 1]; absent: the framework's fitted value (framework_kernel_efficiency, framework.hpp). Used only on
  // profiles with an operation table (analytic/time_model.cpp).
  std::optional<double> kernel_efficiency;
  // The kernel of the attention core (spec/gpu_ops.hpp AttentionKernel); absent: the one the framework runs on the
  // plan's GPU (default_attention_kernel, spec/attention_kernel.hpp).
  std::optional<AttentionKernel> attention_kernel;

  // Exact once validate() accepted the spec: it bounds the world and the global batch (limits.hpp).
  int world() const { return tp * z * cp * pp * dp; }
  int pipelines() const { return z * dp; }
  long long global_batch() const { return 1LL * micro_batch * micro_batches * z * dp; }

  friend bool operator==(const ParallelSpec&, const ParallelSpec&) = default;
};

}  // namespace zeropp
