#pragma once
// Collective communication times with the alpha-beta ring model, the link a group uses, and the nccl-tests
// bus-bandwidth factors (defined once here; microbenchmarks and calibration include this header).
//
// n ranks, M bytes of the full buffer (the all-reduced tensor, the gathered result, the scattered input),
// alpha = link latency per step, beta = per-GPU link bandwidth:
//   all_reduce       2(n-1) (alpha + M/(n beta))
//   all_gather       (n-1)  (alpha + M/(n beta))
//   reduce_scatter   (n-1)  (alpha + M/(n beta))
//   send_recv        alpha + M/beta
// Each is steps(c, n) * alpha + M * busbw_factor(c, n) / beta: for a ring the nccl-tests bus bandwidth equals
// the link bandwidth. A calibrated CollectiveFit {latency, bandwidth} from cluster.collectives replaces
// (alpha, beta) in the same formula, so the fitted bandwidth has bus-bandwidth semantics.
#include <optional>
#include <string_view>

#include "cost_model/spec/cluster_spec.hpp"
#include "cost_model/spec/parallel_spec.hpp"
#include "cost_model/spec/rank_grid.hpp"

namespace zeropp::analytic {

enum class Collective { all_reduce, all_gather, reduce_scatter, send_recv };

// "all_reduce", "all_gather", "reduce_scatter", "send_recv": the keys of ClusterSpec::collectives[level].
const char* collective_name(Collective c);
// The collective of one of those names; nullopt for any other text.
std::optional<Collective> collective_from_name(std::string_view name);

// nccl-tests: busbw = algbw * factor, algbw = M / t. all_reduce 2(n-1)/n, all_gather and reduce_scatter
// (n-1)/n, send_recv 1. n = 1 gives 0 for the collectives (nothing moves). n must be >= 1.
double busbw_factor(Collective c, int n);
// Latency steps of the ring algorithm: all_reduce 2(n-1), all_gather/reduce_scatter n-1, send_recv 1.
int ring_steps(Collective c, int n);

// A group of group_size ranks whose members are `stride` ranks apart (ranks r0, r0+stride, ...), with ranks
// numbered node-major (node k holds ranks [k*gpus_per_node, (k+1)*gpus_per_node)). The group stays inside one
// node when it spans at most a node: group_size*stride <= gpus_per_node (and the cluster has the room), and
// then talks over cluster.intra; otherwise it crosses nodes and the slowest link is cluster.inter.
// A group of 1 "uses" intra. group_size and stride must be >= 1.
bool group_crosses_nodes(const ClusterSpec& cluster, int group_size, int stride);
const LinkSpec& link_for_group(const ClusterSpec& cluster, int group_size, int stride);
// "intra" or "inter": the level key of ClusterSpec::collectives for that group.
const char* link_level(const ClusterSpec& cluster, int group_size, int stride);

// Alpha-beta ring time of collective c over n ranks on `link` for a full buffer of `bytes`. 0 when n == 1 or
// bytes == 0; send_recv is one message of `bytes` for any n >= 2. Throws SpecError for a bandwidth <= 0.
double ring_time(Collective c, int n, double bytes, const LinkSpec& link);
double all_reduce_time(int n, double bytes, const LinkSpec& link);
double all_gather_time(int n, double bytes, const LinkSpec& link);
double reduce_scatter_time(int n, double bytes, const LinkSpec& link);
double p2p_time(double bytes, const LinkSpec& link);

// GPUs of the group in each node it spans (group_size inside one node): the NICs a crossing group uses at once.
int members_per_node(const ClusterSpec& cluster, int group_size, int stride);

// Time of collective c on a group (group_size, stride) of `cluster`: uses the calibrated fit
// cluster.collectives[level][name] when present (its measured table for a group of the table's size, from its
// smallest size up; else its size segment when it is piecewise, else its line), else the alpha-beta ring over
// link_for_group(). A group crossing nodes with k GPUs per node spreads over their k NICs: the inter-node rate (per
// GPU) times k, up to the intra-node rate; a measured table is used as measured.
double collective_time(const ClusterSpec& cluster, Collective c, int group_size, int stride, double bytes);

// The process groups of a plan: dimensions of its rank grid (spec/rank_grid.hpp: tp, cp, z, dp_shard, dp, pp inner
// to outer, Megatron-Core's order), described for the link model as GridGroup {size, stride}; size 1 means the
// dimension is absent. A group over several dimensions is reported as the block of ranks it occupies
// (size*stride), so that group_crosses_nodes() answers as for the real group (node and group sizes powers of two).
using Group = GridGroup;
Group tp_group(const ParallelSpec& parallel);    // size tp, stride 1
Group zero_group(const ParallelSpec& parallel);  // size z, stride tp*cp (the ZeRO-3 group of z GPUs)
Group cp_group(const ParallelSpec& parallel);    // size cp, stride tp (Megatron's tp-cp order)
Group pp_group(const ParallelSpec& parallel);    // size pp, stride world/pp; p2p neighbours are one stride apart
Group dp_group(const ParallelSpec& parallel);    // size dp (dp_shard x replicas), stride tp*cp*z
// All data-parallel copies of a stage: z*cp*dp GPUs (pure ZeRO-3, or DP across every replica), stride tp. With
// dp == 1 and cp == 1 it is zero_group().
Group data_parallel_group(const ParallelSpec& parallel);
// The first and the last pipeline rank of a pipeline, which sum the tied word embedding's gradient (size 1 at
// pp = 1).
Group embedding_group(const ParallelSpec& parallel);
// The groups of the plan's data-parallel picture (spec/strategy.hpp, data_parallel_sync): the GPUs that
// ZeRO-3-shard a stage (size 1 when it is not sharded), and those its gradient (shard) is synchronised across
// after the backward (size 1 when nothing is); their grid dimensions (0: none), which the trainer's rank layout
// splits its communicators by too.
GridMask shard_mask(const ParallelSpec& parallel);
GridMask dp_sync_mask(const ParallelSpec& parallel);
Group shard_group(const ParallelSpec& parallel);
Group dp_sync_group(const ParallelSpec& parallel);
// The same with the plan's data_parallel_sync(parallel) already worked out.
GridMask shard_mask(const DataParallelSync& sync);
GridMask dp_sync_mask(const DataParallelSync& sync);
Group shard_group(const ParallelSpec& parallel, const DataParallelSync& sync);
Group dp_sync_group(const ParallelSpec& parallel, const DataParallelSync& sync);

}  // namespace zeropp::analytic
