#pragma once
// The communicators of one rank, split from the world by the rank layout (the plan's rank grid):
//   pp     the pipeline this rank belongs to (same dp and inner index), ordered by pipeline rank;
//   inner  the intra-node group (z for ZeRO-3, tp for tensor parallelism), ordered by inner index;
//   cp     the context-parallel ranks of this rank (same everything else), ordered by CP rank;
//   dp     the data-parallel replicas holding the same stage and inner index, and their CP ranks (dp x cp: the
//          gradient sync group; dp alone for pure ZeRO-3, whose shard group holds the CP ranks), ordered by dp index
//          then CP rank;
//   embed  the first and the last pipeline rank's inner groups of one dp index (and tp index, CP rank): they sum the
//          tied word-embedding gradient (the first stage's wte and the last stage's copy). Ranks of other
//          pipeline ranks get a group of their own that they never use.
// Built with Communicator::split, so a NCCL world gives NCCL groups and the runtime is unchanged.
#include <memory>

#include <nlohmann/json.hpp>

#include "e2e/comm/communicator.hpp"
#include "e2e/runtime/rank_layout.hpp"

namespace zeropp::e2e {

struct RankGroups {
  Communicator* world = nullptr;  // not owned
  std::unique_ptr<Communicator> pp, inner, cp, dp, embed;
  // The ZeRO-3 shard group (UNSHARD, REDUCE_GRAD): `inner`, or with pure ZeRO-3 under CP its own group over the
  // inner and CP ranks ("z_cp", in shard_own).
  std::unique_ptr<Communicator> shard_own;
  Communicator* shard = nullptr;
  RankCoords coords;

  // Collective over `world`.
  static RankGroups split(Communicator& world, const RankLayout&);
  // Counts of every group, keyed by group name.
  nlohmann::json stats_json() const;
  void reset_stats();
};

}  // namespace zeropp::e2e
