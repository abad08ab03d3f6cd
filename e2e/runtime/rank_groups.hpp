#pragma once
// The communicators of one rank, split from the world by the rank layout (the plan's rank grid):
//   pp     the pipeline this rank belongs to (same everything else), ordered by pipeline rank;
//   tp     the tensor-parallel group, ordered by tp rank;
//   z      the ZeRO-3 shard group (z, or z*dp_shard for zero3, with the CP ranks under pure ZeRO-3), ordered by
//          index in it;
//   cp     the context-parallel ranks of this rank (same everything else), ordered by CP rank;
//   dp     the data-parallel replicas holding the same stage, tp rank and shard, with their CP ranks (dp x cp) unless
//          pure ZeRO-3 shards over them, ordered by dp index then CP rank: the gradient sync group;
//   embed  the first and the last pipeline rank's shard groups of one dp index (and tp rank, CP rank): they sum the
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
  std::unique_ptr<Communicator> pp, tp, z, cp, dp, embed;
  RankCoords coords;

  // Collective over `world`.
  static RankGroups split(Communicator& world, const RankLayout&);
  // Counts of every group, keyed by group name.
  nlohmann::json stats_json() const;
  void reset_stats();
};

}  // namespace zeropp::e2e
