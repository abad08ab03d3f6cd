#include "cost_model/analytic/collectives.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::analytic {

const char* collective_name(Collective c) {
  switch (c) {
    case Collective::all_reduce:
      return "all_reduce";
    case Collective::all_gather:
      return "all_gather";
    case Collective::reduce_scatter:
      return "reduce_scatter";
    case Collective::send_recv:
      return "send_recv";
  }
  return "unknown";
}

std::optional<Collective> collective_from_name(std::string_view name) {
  for (Collective c :
       {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter, Collective::send_recv}) {
    if (name == collective_name(c)) return c;
  }
  return std::nullopt;
}

namespace {

// The errors of the helpers below, out of line so that the helpers stay small enough to inline into
// collective_time (a plan evaluation prices some ten collectives).
[[noreturn]] void bad_rank_count(int n) {
  throw SpecError("collective.ranks", fmt::format("a collective needs >= 1 rank, got {}", n));
}
[[noreturn]] void bad_group(int group_size, int stride) {
  throw SpecError("collective.group",
                  fmt::format("a group needs size >= 1 and stride >= 1, got size {} stride {}", group_size, stride));
}
[[noreturn]] void bad_bandwidth(Collective c, double beta) {
  throw SpecError("cluster.bandwidth", fmt::format("{} needs a positive bandwidth, got {}", collective_name(c), beta));
}

}  // namespace

double busbw_factor(Collective c, int n) {
  if (n < 1) bad_rank_count(n);
  switch (c) {
    case Collective::all_reduce:
      return 2.0 * (n - 1) / n;
    case Collective::all_gather:
    case Collective::reduce_scatter:
      return static_cast<double>(n - 1) / n;
    case Collective::send_recv:
      return 1.0;
  }
  return 0;
}

int ring_steps(Collective c, int n) {
  switch (c) {
    case Collective::all_reduce:
      return 2 * (n - 1);
    case Collective::all_gather:
    case Collective::reduce_scatter:
      return n - 1;
    case Collective::send_recv:
      return 1;
  }
  return 0;
}

bool group_crosses_nodes(const ClusterSpec& cluster, int group_size, int stride) {
  if (group_size < 1 || stride < 1) bad_group(group_size, stride);
  if (group_size == 1 || cluster.nodes <= 1) return false;
  return static_cast<long long>(group_size) * stride > cluster.gpus_per_node;
}

const LinkSpec& link_for_group(const ClusterSpec& cluster, int group_size, int stride) {
  return group_crosses_nodes(cluster, group_size, stride) ? cluster.inter : cluster.intra;
}

const char* link_level(const ClusterSpec& cluster, int group_size, int stride) {
  return group_crosses_nodes(cluster, group_size, stride) ? "inter" : "intra";
}

namespace {

// steps * alpha + M * factor / beta: the ring formulas of the header in one expression.
double alpha_beta(Collective c, int n, double bytes, double alpha, double beta) {
  if (bytes <= 0) return 0;
  if (n <= 1) return 0;  // a group of one moves nothing
  if (beta <= 0) bad_bandwidth(c, beta);
  return ring_steps(c, n) * alpha + bytes * busbw_factor(c, n) / beta;
}

// A measured table (CollectiveFit::table) at `bytes`: the alpha-beta line through the two neighbouring sizes
// (linear in M, so exact on alpha-beta data), or a negative value below its smallest size (the caller falls back
// to the fit there, where latency dominates).
double table_time(const std::vector<CollectiveTablePoint>& table, double bytes) {
  if (bytes < table.front().bytes) return -1;
  if (bytes >= table.back().bytes) return table.back().seconds * bytes / table.back().bytes;  // its bus bandwidth
  const auto hi = std::upper_bound(table.begin(), table.end(), bytes,
                                   [](double m, const CollectiveTablePoint& p) { return m < p.bytes; });
  const auto lo = hi - 1;
  return lo->seconds + (hi->seconds - lo->seconds) * (bytes - lo->bytes) / (hi->bytes - lo->bytes);
}

}  // namespace

double ring_time(Collective c, int n, double bytes, const LinkSpec& link) {
  return alpha_beta(c, n, bytes, link.latency, link.bandwidth);
}

double all_reduce_time(int n, double bytes, const LinkSpec& link) {
  return ring_time(Collective::all_reduce, n, bytes, link);
}
double all_gather_time(int n, double bytes, const LinkSpec& link) {
  return ring_time(Collective::all_gather, n, bytes, link);
}
double reduce_scatter_time(int n, double bytes, const LinkSpec& link) {
  return ring_time(Collective::reduce_scatter, n, bytes, link);
}
double p2p_time(double bytes, const LinkSpec& link) { return ring_time(Collective::send_recv, 2, bytes, link); }

int members_per_node(const ClusterSpec& cluster, int group_size, int stride) {
  if (!group_crosses_nodes(cluster, group_size, stride)) return group_size;
  const long long per_node = stride >= cluster.gpus_per_node ? 1 : cluster.gpus_per_node / stride;
  return static_cast<int>(std::max(1LL, std::min<long long>(group_size, per_node)));
}

namespace {

// A group with k GPUs in each node crosses nodes through k NICs at once (NCCL builds one ring per NIC, each
// crossing nodes through its own: nccl-tests' multi-node busbw is the per-NIC rate times the NICs per node,
// NVIDIA/nccl-tests#119: 96 GB/s with 4 HDR NICs per node), up to what the NVLink leg carries. Inter-node rates
// (link and fits) are per GPU (one NIC each): they scale by k; a measured table is for its exact group.
double spread(const ClusterSpec& cluster, double nics, double per_nic) {
  return nics > 1 ? std::min(per_nic * nics, cluster.intra.bandwidth) : per_nic;
}

// collective_time from the profile's measured fits (cluster.collectives) into `seconds`; false when they have none
// for this level and collective. Out of line: most plan evaluations price on links alone.
bool fitted_collective_time(const ClusterSpec& cluster, Collective c, int group_size, double bytes, bool inter,
                            double nics, double& seconds) {
  const auto level = cluster.collectives.find(inter ? "inter" : "intra");
  if (level == cluster.collectives.end()) return false;
  const auto fit = level->second.find(collective_name(c));
  if (fit == level->second.end()) return false;
  if (!fit->second.table.empty() && group_size == fit->second.table_ranks && bytes > 0) {
    const double t = table_time(fit->second.table, bytes);
    if (t >= 0) {
      seconds = t;
      return true;
    }
  }
  const auto& segments = fit->second.segments;
  if (!segments.empty()) {
    // The first segment that covers the size; above them all, the last (extrapolates the largest range).
    const auto seg = std::find_if(segments.begin(), segments.end(),
                                  [bytes](const CollectiveSegment& s) { return bytes <= s.max_bytes; });
    const CollectiveSegment& use = seg == segments.end() ? segments.back() : *seg;
    seconds = alpha_beta(c, group_size, bytes, use.latency, spread(cluster, nics, use.bandwidth));
    return true;
  }
  seconds = alpha_beta(c, group_size, bytes, fit->second.latency, spread(cluster, nics, fit->second.bandwidth));
  return true;
}

}  // namespace

double collective_time(const ClusterSpec& cluster, Collective c, int group_size, int stride, double bytes) {
  const bool inter = group_crosses_nodes(cluster, group_size, stride);
  const double nics = inter ? members_per_node(cluster, group_size, stride) : 1;
  double fitted = 0;
  if (!cluster.collectives.empty() && fitted_collective_time(cluster, c, group_size, bytes, inter, nics, fitted))
    return fitted;
  const LinkSpec& link = inter ? cluster.inter : cluster.intra;
  return alpha_beta(c, group_size, bytes, link.latency, spread(cluster, nics, link.bandwidth));
}

// Every group below is a set of dimensions of the plan's rank grid (spec/rank_grid.hpp), the one the trainer
// splits its communicators from.
Group tp_group(const ParallelSpec& parallel) { return RankGrid::of(parallel).group(kGridTp); }
Group zero_group(const ParallelSpec& parallel) { return RankGrid::of(parallel).group(kGridZ); }
Group cp_group(const ParallelSpec& parallel) { return RankGrid::of(parallel).group(kGridCp); }
Group pp_group(const ParallelSpec& parallel) { return RankGrid::of(parallel).group(kGridPp); }
Group dp_group(const ParallelSpec& parallel) { return RankGrid::of(parallel).group(kGridSpecDp); }
Group data_parallel_group(const ParallelSpec& parallel) { return RankGrid::of(parallel).group(kGridDataParallel); }
Group embedding_group(const ParallelSpec& parallel) {
  if (parallel.pp == 1) return Group{};
  // The first and the last pipeline rank of one pipeline: (pp-1) pipeline strides apart.
  const RankGrid grid = RankGrid::of(parallel);
  return Group{2, grid.stride(GridDim::pp) * (parallel.pp - 1)};
}
GridMask shard_mask(const ParallelSpec& parallel) { return shard_mask(data_parallel_sync(parallel)); }
GridMask shard_mask(const DataParallelSync& d) {
  if (d.shard_group == 1) return 0;
  // zero3: the z (or TP-rank) GPUs with their CP ranks and dp_shard of the dp groups (HSDP's shard mesh dimension
  // inside its replicate dimension, as FSDP2's (replicate, shard) mesh); the other ZeRO-3 strategies: the z group.
  return d.shard_spans_dp ? kGridCp | kGridZ | kGridDpShard : kGridZ;
}
GridMask dp_sync_mask(const ParallelSpec& parallel) { return dp_sync_mask(data_parallel_sync(parallel)); }
GridMask dp_sync_mask(const DataParallelSync& d) {
  if (d.mode == DpSyncMode::none) return 0;
  // HSDP: one GPU of each of the dp/dp_shard replicas of a shard group. Replicated stages: every data-parallel
  // copy. ZeRO-3 in the z group: the z group's copies across dp and CP (the z dimension excluded).
  if (d.shard_spans_dp) return kGridDp;
  return d.replicas_span_z ? kGridDataParallel : kGridCp | kGridSpecDp;
}
Group shard_group(const ParallelSpec& parallel) { return shard_group(parallel, data_parallel_sync(parallel)); }
Group dp_sync_group(const ParallelSpec& parallel) { return dp_sync_group(parallel, data_parallel_sync(parallel)); }
Group shard_group(const ParallelSpec& parallel, const DataParallelSync& sync) {
  return RankGrid::of(parallel).group(shard_mask(sync));
}
Group dp_sync_group(const ParallelSpec& parallel, const DataParallelSync& sync) {
  return RankGrid::of(parallel).group(dp_sync_mask(sync));
}

}  // namespace zeropp::analytic
