#pragma once
// Communication volume: bytes SENT by one GPU in one iteration, by category, for every strategy.
// A ring collective over n ranks on a buffer of M bytes sends 2(n-1)/n*M per GPU (all-reduce) or (n-1)/n*M
// (all-gather, reduce-scatter); a p2p send sends M. e = element_bytes(parallel.dtype), t = tp, B = micro-batches
// per iteration per pipeline, Psi = parameters held by the GPU's PP rank per TP rank (rank_params(...)).
// Activations (tp, pp) and parameters (all-gathers) travel at e bytes per element, gradients (all-reduces,
// reduce-scatters) at r, the size of the framework's reduce dtype (spec/framework.hpp: Megatron with bf16 and
// FSDP2 reduce in fp32, r = 4; DeepSpeed and ZeroPP in 16 bits, r = e). The counts below are in elements, the
// bytes per element as just said: "2*Psi" of a ZeRO-1 sync is Psi*r (reduce-scatter) + Psi*e (all-gather).
//
//   tp    Megatron TP: per layer per micro-batch 2 all-reduces forward + 2 backward of b*s*h elements, 8bsh
//         with the all-reduce's 2x folded in (SP: all-gather + reduce-scatter pairs, same volume); full
//         recompute repeats the 2 forward ones (12bsh). The first stage adds the vocabulary-parallel
//         embedding's forward all-reduce, the last stage the LM head's backward all-reduce (2bsh each).
//         Times e * (t-1)/t * layers on the rank * B.
//   pp    per micro-batch and per chunk, b*s*h/t elements (Megatron's scatter-gather / SP split the
//         activation over the TP ranks) forward to the next virtual stage and back to the previous one;
//         the first virtual stage sends no gradient, the last no activation. Interleaving (v chunks) multiplies
//         the boundaries by v.
//   dp    gradient synchronisation of the replicated (or dp-sharded) state, once per iteration:
//         DP all-reduce or ZeRO-1/2 reduce-scatter + all-gather: 2*Psi*(n-1)/n over the n = z*dp replicas
//         (3d, pp_zero1); ZeroPP hybrid A all-reduces each GPU's shard Psi/z across dp, hybrid B
//         reduce-scatters it and all-gathers the updated parameters: both 2*(Psi/z)*(dp-1)/dp. The all-reduce
//         moves 2*r bytes per element, the reduce-scatter + all-gather pair r + e.
//         With a tied embedding and pp > 1, the first and the last rank also all-reduce the gradients of their
//         two word-embedding copies (2 ranks: V*h/t elements each, the shard V*h/z under ZeRO-3), r bytes each.
//   zero  ZeRO-3 gathers and gradient reduce-scatters inside the ZeRO-3 group:
//         zero3 (pure DP, group z*dp): 3*Psi per micro-batch (gather forward, gather backward, reduce-scatter);
//         zero3 under PP (FSDP2, torchtitan's 3-D): 2*Psi per iteration (one gather, one reduce-scatter);
//         zero3 HSDP (group S = z*cp*dp_shard): the same in the group of S, and in `dp` the all-reduce of the
//         shard Psi/S across the dp/dp_shard replicas, 2*r*(Psi/S)*(n-1)/n, every micro-batch without PP, once
//         per iteration under PP.
//         zero3_pp (naive ZeRO-3 under PP, group z): 3*Psi per micro-batch;
//         ZeroPP (group z): per scheduling unit of U micro-batches, up to 2 gathers + 1 reduce-scatter of Psi
//         (GradReduce::per_unit: 3*Psi*ceil(B/U), the paper's 36*B*h^2/U per layer), or 2 gathers per unit and
//         a reduce-scatter inside every W (GradReduce::per_w: 2*Psi*ceil(B/U) + Psi*B, the authors' code's
//         24*B*h^2/U + 12*B*h^2). Times (z-1)/z, gathers at e and reduce-scatters at r bytes per element.
//         zero3_pp syncs across dp like hybrid A with zero_stage 0, like hybrid B otherwise (same volume).
//         3d / pp_zero1 with zero_stage 3 count here too: 3*Psi per micro-batch over the z*dp replicas.
// ZeroPP exactly as its schedule runs (DESIGN.md section 5): a rank's chunks 0..v-2 are gathered twice per unit
// (forward pass, backward pass) but its last chunk once, since its forwards run straight into its backwards
// with no chunk switch. So a rank moves (3v-1)/(3v) of the paper's 36*B*h^2/U per layer (24*B*h^2/U for v=1),
// which the simulator's count of UNSHARD/REDUCE_GRAD actions reproduces exactly. The criterion keeps the
// paper's 36*B*h^2/U (zeropp_elements_per_layer), an upper bound on every chunk.
#include "cost_model/analytic/plan_basics.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::analytic {

struct CommBytes {
  double tp = 0;
  double pp = 0;
  double dp = 0;
  double zero = 0;
  double cp = 0;     // context-parallel exchanges (ring KV passes or Ulysses all-to-alls); 0 without CP
  double total = 0;  // tp + pp + dp + zero + cp
};

// Elements per layer per iteration, without ring factor and element size, for the criterion
// (DESIGN.md section 4): ZeroPP moves 36*B*h^2/U (per_unit) or 24*B*h^2/U + 12*B*h^2 (per_w), taking the
// layer's parameters as 12h^2; TP moves 8*B*s*b*h. Continuous in U (B/U need not be an integer).
double zeropp_elements_per_layer(int h, int B, int U, GradReduce mode);
double tp_elements_per_layer(int B, int s, int b, int h);
// Number of scheduling units: ceil(B/U).
int unit_count(int B, int U);

// Bytes sent by one GPU of PP rank `pp_rank` (0 <= pp_rank < pp) in one iteration.
CommBytes comm_bytes(const Plan& plan, int pp_rank);
// The PP rank with the largest total (ranks differ only by the embedding and head they hold).
CommBytes comm_bytes(const Plan& plan);
// The same with the plan's basics already worked out (plan_basics(plan): estimate's).
CommBytes comm_bytes(const Plan& plan, const PlanBasics& basics);

}  // namespace zeropp::analytic
