#pragma once
// ONE contention rule for every communication kernel that runs beside compute on the same GPU: ZeRO-3/FSDP and
// ZeroPP gathers and reduce-scatters, the data-parallel gradient sync and the parameter all-gather after a sharded
// step, pipeline sends and receives, and tensor-parallel communication overlapped with its GEMMs. No strategy gets
// an overlap another is denied, and none is free.
//
// The rule: a communication kernel holds a share of the GPU while it runs (its SMs, and the HBM bandwidth its
// copies take); compute that runs beside it for t wall seconds proceeds at (1 - share) of its rate, so it takes
// share x t longer. (When the kernel holds its SMs for the whole of a compute operation, as TransformerEngine's
// SM margin does, t is the stretched duration itself and the operation takes 1 / (1 - share) as long.)
// The share by implementation (CommKernel):
//   nccl         NCCL collectives and send/recv: the GPU's measured slowdown of compute under NCCL overlap,
//                GpuOps::nccl_contention (published: Lee et al. 2025, arXiv 2507.03114, 18.9% mean over A100,
//                H100, MI250 and MI210 with GPT and Llama layers); 0 where the profile has no operation table.
//   userbuffers  TransformerEngine's userbuffers kernels of the "pipeline" and "bulk" methods: num_sm = 16 SMs,
//                withheld from the GEMM for its whole duration (set_sm_margin; transformer_engine/pytorch/module/
//                base.py, initialize_ub get_default_config; comm_gemm_overlap.cpp runs the GEMM on
//                _math_sms = sm_count - num_comm_sm): 16 / sm_count.
//   ring_exchange     TE's ring exchange by copy engine (use_ce, num_sm 1, no SM margin): 1 / sm_count.
//   symmetric_memory  PyTorch's async TP, copies by copy engine (torch/distributed/_symmetric_memory): 0.
//                Copy-engine transfers' HBM traffic is not counted (a transfer of B bytes moves 2B through HBM
//                against the GEMM's far larger operand traffic).
#include "cost_model/spec/cluster_spec.hpp"

namespace zeropp::analytic {

enum class CommKernel { nccl, userbuffers, ring_exchange, symmetric_memory };

// SMs TransformerEngine's userbuffers kernels take (num_sm of the pipeline and bulk methods; ring exchange: 1).
inline constexpr int kUserbuffersSms = 16;
inline constexpr int kRingExchangeSms = 1;

// The share of compute a kernel of that implementation takes on `cluster`'s GPU, in [0, 1).
double contention_share(const ClusterSpec& cluster, CommKernel kernel);

// Seconds compute loses to `overlap` wall seconds beside such a kernel: share x overlap.
double contention_seconds(const ClusterSpec& cluster, CommKernel kernel, double overlap);

// A compute operation of `seconds` that the kernel's SMs are withheld from for its whole duration:
// seconds / (1 - share).
double with_sm_margin(const ClusterSpec& cluster, CommKernel kernel, double seconds);

}  // namespace zeropp::analytic
